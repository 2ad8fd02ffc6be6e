//===- MatMul.cpp - numpy matmul with broadcast batch dims ----------------===//
//
// A batched lhs against a 2-d rhs (every projection in a transformer) folds
// the batch into M for one large GEMM; other cases loop over the broadcast
// batch with one GEMM per matrix pair.
//
//===----------------------------------------------------------------------===//
#include "Broadcast.h"
#include "Kernels.h"

namespace frenzy::cpu {

void matmulF32(float *out, const Shape &outShape, const float *a,
               const Shape &aShape, const float *b, const Shape &bShape) {
  // numpy promotes 1-d operands: [K] -> [1, K] (lhs), [K] -> [K, 1] (rhs).
  Shape as = aShape, bs = bShape;
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs.size() == 2) {
    gemm(false, false, numElements(as) / K, N, K, 1.0f, a, b, 0.0f, out);
    return;
  }
  Shape batch;
  size_t rank = std::max(as.size(), bs.size()) - 2;
  for (size_t i = 0; i < rank; ++i) {
    auto dim = [&](const Shape &s) {
      size_t r = s.size() - 2;
      return i + r >= rank ? s[i + r - rank] : 1;
    };
    batch.push_back(std::max(dim(as), dim(bs)));
  }
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  std::vector<int64_t> strides[2] = {detail::broadcastStrides(aBatch, batch),
                                     detail::broadcastStrides(bBatch, batch)};
  (void)outShape;
  detail::forEachBroadcast(batch, strides, [&](int64_t i, const int64_t *o) {
    gemm(false, false, M, N, K, 1.0f, a + o[0] * M * K, b + o[1] * K * N, 0.0f,
         out + i * M * N);
  });
}

} // namespace frenzy::cpu
