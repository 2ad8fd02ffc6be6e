//===- ScatterAdd.cuh - deterministic scatter-add of rows ------*- CUDA -*-===//
//
// dst[(o * rows + idx[j]) * inner + c] += src[(o * numIdx + j) * inner + c]
// for every j, the backward of gather and of the embedding lookup. Without
// floating atomics: thread (o, c, p) owns the destination rows of range p
// (P ranges of ceil(rows / P) rows) and walks j = 0..numIdx-1 in order,
// adding the matches (one unsigned compare per index), so
// each destination element sums its sources in index order, as the CPU
// loop does (bit-identical for f32). Every thread reads every index, but
// the lanes of a warp read the same one (a broadcast), and P is chosen so
// that about 128k threads run: the scan costs far less than the adds.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_KERNELS_SCATTERADD_CUH
#define FRENZY_RUNTIME_CUDA_KERNELS_SCATTERADD_CUH

#include "Common.cuh"

namespace frenzy::cuda::kernels {

template <typename S>
__global__ void scatterAddRowsKernel(float *dst, const S *src,
                                     const int64_t *idx, int64_t numIdx,
                                     int64_t outer, int64_t rows,
                                     int64_t inner, int64_t parts) {
  const int64_t total = outer * inner * parts;
  FRENZY_GRID_STRIDE(t, total) {
    const int64_t c = t % inner, p = (t / inner) % parts, o = t / (inner * parts);
    const int64_t per = (rows + parts - 1) / parts, lo = p * per;
    const uint64_t span = lo < rows ? uint64_t(min(per, rows - lo)) : 0;
    float *d = dst + o * rows * inner + c;
    const S *sc = src + o * numIdx * inner + c;
    for (int64_t j = 0; j < numIdx; ++j) {
      int64_t r = idx[j];
      r = r < 0 ? r + rows : r;
      // Rows outside [0, rows) fall outside every range (the forward
      // kernel reported them).
      if (uint64_t(r - lo) >= span)
        continue;
      d[r * inner] += toF(sc[j * inner]);
    }
  }
}

inline int64_t scatterParts(int64_t outer, int64_t inner, int64_t rows) {
  int64_t cols = outer * inner;
  int64_t p = (131072 + cols - 1) / (cols < 1 ? 1 : cols);
  return p < 1 ? 1 : (p > rows ? (rows < 1 ? 1 : rows) : p);
}

template <typename S>
Status scatterAddRows(cudaStream_t s, float *dst, const S *src,
                      const int64_t *idx, int64_t numIdx, int64_t outer,
                      int64_t rows, int64_t inner, const char *name) {
  if (outer * inner * numIdx <= 0)
    return {};
  int64_t parts = scatterParts(outer, inner, rows);
  scatterAddRowsKernel<S><<<blocksFor(outer * inner * parts), kThreads, 0, s>>>(
      dst, src, idx, numIdx, outer, rows, inner, parts);
  return launched(name);
}

} // namespace frenzy::cuda::kernels

#endif
