//===- Reduce.cpp - reductions and the adjoint of broadcasting ------------===//
//
// Sums accumulate in double in a fixed order (no threads), so results are
// bit-identical run to run.
//
//===----------------------------------------------------------------------===//
#include "Broadcast.h"

#include <algorithm>
#include <limits>

namespace frenzy::cpu {

void reduceF32(ReduceKind kind, float *out, const float *in,
               const Shape &inShape, const std::vector<int64_t> &axes) {
  // Output shape with reduced dims of size 1: each input element maps to the
  // output element through broadcast strides.
  Shape outShape = inShape;
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= inShape[a];
    outShape[a] = 1;
  }
  int64_t n = numElements(outShape);
  std::vector<double> acc(n, kind == ReduceKind::Max
                                 ? -std::numeric_limits<double>::infinity()
                             : kind == ReduceKind::Min
                                 ? std::numeric_limits<double>::infinity()
                                 : 0.0);
  std::vector<int64_t> strides[1] = {detail::broadcastStrides(outShape, inShape)};
  detail::forEachBroadcast(inShape, strides, [&](int64_t i, const int64_t *o) {
    double v = in[i];
    double &a = acc[o[0]];
    a = kind == ReduceKind::Max   ? std::max(a, v)
        : kind == ReduceKind::Min ? std::min(a, v)
                                  : a + v;
  });
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(kind == ReduceKind::Mean ? acc[i] / double(count) : acc[i]);
}

void sumToShapeF32(float *out, const Shape &outShape, const float *in,
                   const Shape &inShape) {
  int64_t n = numElements(outShape);
  std::vector<double> acc(n, 0.0);
  std::vector<int64_t> strides[1] = {detail::broadcastStrides(outShape, inShape)};
  detail::forEachBroadcast(inShape, strides, [&](int64_t i, const int64_t *o) {
    acc[o[0]] += in[i];
  });
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(acc[i]);
}

} // namespace frenzy::cpu
