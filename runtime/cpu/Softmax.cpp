//===- Softmax.cpp - softmax and log-softmax over any axis ----------------===//
//
// The shape is viewed as [outer, n, inner]; each of the outer * inner lanes
// is one softmax over n values spaced `inner` apart. Max-subtracted for
// stability; sums in double.
//
//===----------------------------------------------------------------------===//
#include "TensorOps.h"

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
} // namespace

void softmaxF32(float *out, const float *in, const Shape &shape, int64_t axis,
                bool log) {
  int64_t outer, n, inner;
  lanes(shape, axis, outer, n, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *x = in + o * n * inner + i;
      float *y = out + o * n * inner + i;
      float mx = x[0];
      for (int64_t j = 1; j < n; ++j)
        mx = std::max(mx, x[j * inner]);
      double sum = 0;
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(double(x[j * inner] - mx));
      double lse = std::log(sum);
      for (int64_t j = 0; j < n; ++j) {
        double z = double(x[j * inner] - mx);
        y[j * inner] = float(log ? z - lse : std::exp(z) / sum);
      }
    }
}

void softmaxGradF32(float *din, const float *dout, const float *y,
                    const Shape &shape, int64_t axis, bool log) {
  int64_t outer, n, inner;
  lanes(shape, axis, outer, n, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      double acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        int64_t e = base + j * inner;
        acc += log ? double(dout[e]) : double(dout[e]) * y[e];
      }
      for (int64_t j = 0; j < n; ++j) {
        int64_t e = base + j * inner;
        din[e] = log ? float(dout[e] - std::exp(double(y[e])) * acc)
                     : float(y[e] * (dout[e] - acc));
      }
    }
}

} // namespace frenzy::cpu
