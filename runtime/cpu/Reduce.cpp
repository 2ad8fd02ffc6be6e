//===- Reduce.cpp - reductions and the adjoint of broadcasting ------------===//
//
// A reduction is the input walked row by row with the output read through
// broadcast strides (0 on reduced dims), so one loop serves any set of axes:
// rows along a reduced dim fold into one accumulator, rows along a kept dim
// add into a run of them. Sums accumulate in double in the fixed row-major
// order of the input (no threads), so results are bit-identical run to run.
//
//===----------------------------------------------------------------------===//
#include "Broadcast.h"

#include <algorithm>
#include <limits>

namespace frenzy::cpu {

namespace {

/// acc[out(i)] = op(acc[out(i)], in[i]) over every element i of inShape,
/// where out(i) reads acc (shape accShape) broadcast to inShape.
template <typename Op>
void accumulate(std::vector<double> &acc, const Shape &accShape,
                const float *in, const Shape &inShape, Op op) {
  std::vector<int64_t> strides[1] = {
      detail::broadcastStrides(accShape, inShape)};
  detail::forEachRow(inShape, strides, [&](int64_t pos, const int64_t *off,
                                           const int64_t *step, int64_t len) {
    const float *x = in + pos;
    double *a = acc.data() + off[0];
    if (step[0] == 0) { // the row runs along a reduced dim
      double r = *a;
      for (int64_t j = 0; j < len; ++j)
        r = op(r, double(x[j]));
      *a = r;
    } else {
      for (int64_t j = 0; j < len; ++j)
        a[j * step[0]] = op(a[j * step[0]], double(x[j]));
    }
  });
}

constexpr auto plus = [](double a, double b) { return a + b; };

} // namespace

void reduceF32(ReduceKind kind, float *out, const float *in,
               const Shape &inShape, const std::vector<int64_t> &axes) {
  // The output as the input shape with reduced dims of size 1.
  Shape outShape = inShape;
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= inShape[a];
    outShape[a] = 1;
  }
  const int64_t n = numElements(outShape);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> acc(n, kind == ReduceKind::Max   ? -inf
                             : kind == ReduceKind::Min ? inf
                                                       : 0.0);
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    accumulate(acc, outShape, in, inShape, plus);
    break;
  case ReduceKind::Max:
    accumulate(acc, outShape, in, inShape,
               [](double a, double b) { return std::max(a, b); });
    break;
  case ReduceKind::Min:
    accumulate(acc, outShape, in, inShape,
               [](double a, double b) { return std::min(a, b); });
    break;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(kind == ReduceKind::Mean ? acc[i] / double(count) : acc[i]);
}

void sumToShapeF32(float *out, const Shape &outShape, const float *in,
                   const Shape &inShape) {
  const int64_t n = numElements(outShape);
  std::vector<double> acc(n, 0.0);
  accumulate(acc, outShape, in, inShape, plus);
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(acc[i]);
}

} // namespace frenzy::cpu
