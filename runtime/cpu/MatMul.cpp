//===- MatMul.cpp - numpy matmul with broadcast batch dims ----------------===//
//
// A batched lhs against a 2-d rhs (every projection in a transformer) folds
// the batch into M for one large GEMM; other cases loop over the broadcast
// batch with one GEMM per matrix pair, each operand's matrix found through
// broadcast strides over the batch dims (0 where it is broadcast).
//
//===----------------------------------------------------------------------===//
#include "Broadcast.h"
#include "Kernels.h"

#include <algorithm>

namespace frenzy::cpu {

void matmulF32(float *out, const Shape &outShape, const float *a,
               const Shape &aShape, const float *b, const Shape &bShape) {
  // numpy promotes 1-d operands: [K] -> [1, K] (lhs), [K] -> [K, 1] (rhs);
  // the dims it then drops from the result do not change the layout.
  Shape as = aShape, bs = bShape;
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (numElements(outShape) == 0)
    return;
  if (K == 0) { // an empty contraction; BLAS rejects a zero leading dim
    std::fill(out, out + numElements(outShape), 0.0f);
    return;
  }
  if (bs.size() == 2) {
    gemm(false, false, numElements(as) / K, N, K, 1.0f, a, b, 0.0f, out);
    return;
  }
  const Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(aBatch.size(), bBatch.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: dim i of the batch is dim i - (rank - size) of each.
    if (i + aBatch.size() >= rank)
      batch[i] = std::max(batch[i], aBatch[i + aBatch.size() - rank]);
    if (i + bBatch.size() >= rank)
      batch[i] = std::max(batch[i], bBatch[i + bBatch.size() - rank]);
  }
  std::vector<int64_t> strides[2] = {detail::broadcastStrides(aBatch, batch),
                                     detail::broadcastStrides(bBatch, batch)};
  detail::forEachBroadcast(batch, strides, [&](int64_t i, const int64_t *o) {
    gemm(false, false, M, N, K, 1.0f, a + o[0] * M * K, b + o[1] * K * N, 0.0f,
         out + i * M * N);
  });
}

} // namespace frenzy::cpu
