//===- Embedding.cu - token embedding lookup, forward and backward --------===//
//
// Forward copies table rows (f32 master weights) into activations of the
// compute type. Backward adds each token's gradient row into its table row
// with ScatterAdd.cuh's owner-computes scheme: deterministic, no atomics,
// each row summing its tokens in order as the CPU loop does.
//
//===----------------------------------------------------------------------===//
#include "ScatterAdd.cuh"

namespace frenzy::cuda::kernels {
namespace {

template <typename T>
__global__ void embeddingForwardKernel(T *out, const float *table,
                                       const int64_t *ids, int64_t N,
                                       int64_t V, int64_t C, int64_t *bad) {
  FRENZY_GRID_STRIDE(e, N * C) {
    const int64_t n = e / C, c = e - n * C, id = ids[n];
    if (id < 0 || id >= V) {
      if (c == 0)
        reportBad(bad, n);
      out[e] = fromF<T>(0.0f);
      continue;
    }
    out[e] = fromF<T>(table[id * C + c]);
  }
}

} // namespace

Status embeddingForward(cudaStream_t s, FloatType t, void *out,
                        const float *table, const int64_t *ids, int64_t N,
                        int64_t V, int64_t C, int64_t *badIndex) {
  if (N * C <= 0)
    return {};
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    embeddingForwardKernel<T><<<blocksFor(N * C), kThreads, 0, s>>>(
        static_cast<T *>(out), table, ids, N, V, C, badIndex);
  });
  return launched("embedding");
}

Status embeddingBackward(cudaStream_t s, FloatType t, float *dtable,
                         const void *dout, const int64_t *ids, int64_t N,
                         int64_t V, int64_t C) {
  Status st;
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    st = scatterAddRows<T>(s, dtable, static_cast<const T *>(dout), ids, N, 1,
                           V, C, "embedding_grad");
  });
  return st;
}

} // namespace frenzy::cuda::kernels
