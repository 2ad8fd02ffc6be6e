//===- Softmax.cpp - softmax and log-softmax over any axis ----------------===//
//
// The shape is viewed as [outer, n, inner]: outer * inner independent
// softmaxes over n values spaced `inner` apart. The last axis (inner == 1,
// attention scores and logits) runs row by row. Otherwise the n rows of
// `inner` values are swept whole, keeping inner running maxima and sums, so
// memory is read contiguously instead of one strided lane at a time.
// Max-subtracted for stability; sums in double. out may alias in.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "TensorOps.h"
#include "VecMath.h"

#include <algorithm>
#include <cmath>

namespace frenzy::cpu {

namespace {
void lanes(const Shape &shape, int64_t axis, int64_t &outer, int64_t &n,
           int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

void logSoftmaxRow(float *y, const float *x, int64_t n) {
  const double lse = logSumExp(x, n); // before y (which may be x) is written
  for (int64_t j = 0; j < n; ++j)
    y[j] = float(double(x[j]) - lse);
}
} // namespace

void softmaxF32(float *out, const float *in, const Shape &shape, int64_t axis,
                bool log) {
  int64_t outer, n, inner;
  lanes(shape, axis, outer, n, inner);
  if (n == 0)
    return;
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      if (log)
        logSoftmaxRow(out + o * n, in + o * n, n);
      else
        softmaxRow(out + o * n, in + o * n, n);
    }
    return;
  }
  std::vector<float> mx(inner);
  std::vector<double> sum(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const float *x = in + o * n * inner;
    float *y = out + o * n * inner;
    std::copy(x, x + inner, mx.begin());
    for (int64_t j = 1; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i)
        mx[i] = std::max(mx[i], x[j * inner + i]);
    // y holds x - max (or its exp) between the passes; each element is read
    // before it is written, so in == out works.
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        float z = x[j * inner + i] - mx[i];
        float e = fastExp(z);
        sum[i] += e;
        y[j * inner + i] = log ? z : e;
      }
    for (int64_t i = 0; i < inner; ++i)
      sum[i] = log ? std::log(sum[i]) : 1.0 / sum[i];
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        float &v = y[j * inner + i];
        v = log ? float(v - sum[i]) : float(v * sum[i]);
      }
  }
}

void softmaxGradF32(float *din, const float *dout, const float *y,
                    const Shape &shape, int64_t axis, bool log) {
  int64_t outer, n, inner;
  lanes(shape, axis, outer, n, inner);
  // acc[i] = sum over the axis of dout * y (softmax) or of dout (log).
  std::vector<double> acc(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * n * inner;
    const float *dy = dout + base, *yy = y + base;
    float *dx = din + base;
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t e = j * inner + i;
        acc[i] += log ? double(dy[e]) : double(dy[e]) * yy[e];
      }
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t e = j * inner + i;
        dx[e] = log ? float(dy[e] - fastExp(yy[e]) * acc[i])
                    : float(yy[e] * (dy[e] - acc[i]));
      }
  }
}

} // namespace frenzy::cpu
