//===- Broadcast.h - numpy broadcasting index arithmetic --------*- C++ -*-===//
//
// Internal to the CPU kernels. An operand broadcast to an output shape is
// read through per-dimension strides that are 0 where the operand has size 1
// (or no dim at all): offset = sum(index[d] * stride[d]).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CPU_BROADCAST_H
#define FRENZY_RUNTIME_CPU_BROADCAST_H

#include "TensorOps.h"

#include <cstddef>

namespace frenzy::cpu::detail {

/// Strides (in elements) for reading `in` broadcast to `out` (same rank as
/// out, right-aligned; 0 on broadcast dims).
std::vector<int64_t> broadcastStrides(const Shape &in, const Shape &out);

/// Visits every element of `out` in row-major order, calling
/// f(outIndex, offsets[0..k)) with each operand's flat offset.
template <std::size_t K, typename F>
void forEachBroadcast(const Shape &out, const std::vector<int64_t> (&strides)[K],
                      F &&f) {
  const std::size_t rank = out.size();
  const int64_t n = numElements(out);
  std::vector<int64_t> idx(rank, 0);
  int64_t off[K] = {};
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (std::size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (std::size_t k = 0; k < K; ++k)
        off[k] += strides[k][d];
      if (idx[d] < out[d])
        break;
      for (std::size_t k = 0; k < K; ++k)
        off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

/// Row-major strides of a shape.
std::vector<int64_t> contiguousStrides(const Shape &shape);

} // namespace frenzy::cpu::detail

#endif
