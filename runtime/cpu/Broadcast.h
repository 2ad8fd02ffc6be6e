//===- Broadcast.h - numpy broadcasting index arithmetic --------*- C++ -*-===//
//
// Internal to the CPU kernels (the CUDA kernels share the host-side shape
// arithmetic: runtime/cuda/kernels/Movement.cu). An operand broadcast to an
// output shape is read through per-dimension strides that are 0 where the
// operand has size 1 (or no dim at all): offset = sum(index[d] * stride[d]).
// The same walk serves transposes and slices (other strides) and reductions
// (the output read through strides over the input shape), so every
// shape-generic kernel shares this one iterator.
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

/// Row-major strides of a shape.
std::vector<int64_t> contiguousStrides(const Shape &shape);

/// Output shape, input strides and start offset of a strided slice
/// (ONNX Slice: negative steps walk backwards from start).
int64_t sliceGeometry(const Shape &inShape, const std::vector<int64_t> &starts,
                      const std::vector<int64_t> &limits,
                      const std::vector<int64_t> &steps, Shape &outShape,
                      std::vector<int64_t> &strides);

/// Visits the walked shape one innermost row at a time, calling
/// f(pos, offsets, steps, len): pos is the row's row-major position in
/// `shape`, offsets[k] operand k's offset of the row's first element and
/// steps[k] its stride along the row. Size-1 dims are dropped and adjacent
/// dims that are contiguous for every operand merged first, so rows are as
/// long as the layouts allow (a same-shape walk is a single row) and the
/// per-element work of the callers is a tight loop over one stride.
template <std::size_t K, typename F>
void forEachRow(const Shape &shape, const std::vector<int64_t> (&strides)[K],
                F &&f) {
  Shape dims;
  std::vector<int64_t> st[K];
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return;
    if (shape[d] == 1)
      continue;
    bool merge = !dims.empty();
    for (std::size_t k = 0; k < K && merge; ++k)
      merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      dims.back() *= shape[d];
      for (std::size_t k = 0; k < K; ++k)
        st[k].back() = strides[k][d];
      continue;
    }
    dims.push_back(shape[d]);
    for (std::size_t k = 0; k < K; ++k)
      st[k].push_back(strides[k][d]);
  }
  int64_t off[K] = {}, step[K] = {};
  if (dims.empty()) { // a scalar walk
    f(int64_t(0), static_cast<const int64_t *>(off),
      static_cast<const int64_t *>(step), int64_t(1));
    return;
  }
  const std::size_t outer = dims.size() - 1;
  const int64_t len = dims.back();
  for (std::size_t k = 0; k < K; ++k)
    step[k] = st[k].back();
  int64_t rows = 1;
  for (std::size_t d = 0; d < outer; ++d)
    rows *= dims[d];
  std::vector<int64_t> idx(outer, 0);
  for (int64_t r = 0; r < rows; ++r) {
    f(r * len, static_cast<const int64_t *>(off),
      static_cast<const int64_t *>(step), len);
    for (std::size_t d = outer; d-- > 0;) {
      ++idx[d];
      for (std::size_t k = 0; k < K; ++k)
        off[k] += st[k][d];
      if (idx[d] < dims[d])
        break;
      for (std::size_t k = 0; k < K; ++k)
        off[k] -= st[k][d] * dims[d];
      idx[d] = 0;
    }
  }
}

/// Visits every element of `shape` in row-major order, calling
/// f(pos, offsets[0..K)) with each operand's flat offset.
template <std::size_t K, typename F>
void forEachBroadcast(const Shape &shape,
                      const std::vector<int64_t> (&strides)[K], F &&f) {
  forEachRow(shape, strides,
             [&](int64_t pos, const int64_t *off, const int64_t *step,
                 int64_t len) {
               int64_t o[K];
               for (std::size_t k = 0; k < K; ++k)
                 o[k] = off[k];
               for (int64_t j = 0; j < len; ++j) {
                 f(pos + j, static_cast<const int64_t *>(o));
                 for (std::size_t k = 0; k < K; ++k)
                   o[k] += step[k];
               }
             });
}

/// Calls f(T{}) with an unsigned integer type of elemBytes bytes, so that
/// byte-typed kernels move elements with plain loads and stores instead of
/// one memcpy call each. Returns false for a size with no such type.
template <typename F> bool withElementType(int elemBytes, F &&f) {
  switch (elemBytes) {
  case 1: f(uint8_t{}); return true;
  case 2: f(uint16_t{}); return true;
  case 4: f(uint32_t{}); return true;
  case 8: f(uint64_t{}); return true;
  default: return false;
  }
}

/// dst (dense, `shape`) = src read through `strides`; unit-stride rows move
/// with memcpy. The engine of transpose, expand and slice.
void stridedCopy(void *dst, const void *src, const Shape &shape,
                 const std::vector<int64_t> &strides, int elemBytes);

} // namespace frenzy::cpu::detail

#endif
