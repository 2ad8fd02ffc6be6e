//===- Gemm.cu - matrix products through cuBLASLt -------------------------===//
//
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the
// operands go to cuBLASLt swapped, each described as the column-major view
// of its row-major storage. f32 uses CUBLAS_COMPUTE_32F (IEEE fp32, no
// TF32: the CPU comparison needs 1e-5); bf16/f16 use the tensor cores with
// f32 accumulation and f32 scaling, C in f32 or the input type.
// Algorithms come from cuBLASLt's heuristic once per (shape, types,
// alignment) and are cached: a training step repeats the same few GEMMs.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace frenzy::cuda::kernels {
namespace {

cudaDataType_t cudaType(FloatType t) {
  switch (t) {
  case FloatType::F32: return CUDA_R_32F;
  case FloatType::BF16: return CUDA_R_16BF;
  case FloatType::F16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

int alignmentOf(const void *p, int64_t elemBytes, int64_t stride) {
  // The largest power of two up to 16 dividing the address and, for
  // batches, each matrix's offset.
  uint64_t a = reinterpret_cast<uintptr_t>(p) |
               uint64_t(stride * elemBytes) | 16u;
  return int(a & (~a + 1));
}

/// Frees the cuBLASLt descriptors of one call, whatever path returns.
struct Descs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descs() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

using AlgoKey = std::tuple<cublasLtHandle_t, int64_t, int64_t, int64_t,
                           int64_t, int, int, int, int, int, int, int, int,
                           size_t, bool>;
std::mutex algoMutex;
std::map<AlgoKey, cublasLtMatmulAlgo_t> algoCache;

Status layout(cublasLtMatrixLayout_t &l, cudaDataType_t t, int64_t rows,
              int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  if (auto e = cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld))
    return blasStatus("gemm: cublasLtMatrixLayoutCreate", e);
  if (batch > 1) {
    int32_t b32 = int32_t(batch);
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                     &b32, sizeof b32);
    cublasLtMatrixLayoutSetAttribute(
        l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  }
  return {};
}

} // namespace

Status gemm(const BlasHandles &h, cudaStream_t stream, bool transA,
            bool transB, int64_t M, int64_t N, int64_t K, float alpha,
            const void *A, const void *B, FloatType abType, float beta,
            void *C, FloatType cType, int64_t batch, int64_t strideA,
            int64_t strideB, int64_t strideC) {
  if (M <= 0 || N <= 0 || batch <= 0)
    return {};
  if (cType != FloatType::F32 && cType != abType)
    return Status::error(std::string("gemm: C of type ") +
                         floatTypeName(cType) + " with " +
                         floatTypeName(abType) + " inputs is not supported");
  const int64_t cBytes = floatBytes(cType);
  if (K <= 0) { // an empty contraction: C = beta * C; only beta 0 is needed
    if (beta != 0.0f)
      return Status::error("gemm: K = 0 with beta != 0 is not supported");
    for (int64_t i = 0; i < batch; ++i)
      if (auto e = cudaMemsetAsync(static_cast<char *>(C) + i * strideC * cBytes,
                                   0, M * N * cBytes, stream))
        return cudaStatus("gemm", e);
    return {};
  }
  if (!h.lt)
    return Status::error("gemm: no cuBLASLt handle");
  const cudaDataType_t ab = cudaType(abType), ct = cudaType(cType);
  const int64_t abBytes = floatBytes(abType);
  Descs d;
  if (auto e = cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F))
    return blasStatus("gemm: cublasLtMatmulDescCreate", e);
  // The column-major problem: C^T [N, M] = op(B)^T [N, K] op(A)^T [K, M].
  cublasOperation_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                 sizeof opA);
  cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                 sizeof opB);
  Status st;
  if (!(st = transB ? layout(d.a, ab, K, N, K, batch, strideB)
                    : layout(d.a, ab, N, K, N, batch, strideB)).ok() ||
      !(st = transA ? layout(d.b, ab, M, K, M, batch, strideA)
                    : layout(d.b, ab, K, M, K, batch, strideA)).ok() ||
      !(st = layout(d.c, ct, N, M, N, batch, strideC)).ok())
    return st;

  const int alA = alignmentOf(B, abBytes, batch > 1 ? strideB : 0);
  const int alB = alignmentOf(A, abBytes, batch > 1 ? strideA : 0);
  const int alC = alignmentOf(C, cBytes, batch > 1 ? strideC : 0);
  AlgoKey key{h.lt, M, N, K, batch, int(abType), int(cType), int(transA),
              int(transB), alA, alB, alC, 0, h.workspaceBytes, beta != 0.0f};
  cublasLtMatmulAlgo_t algo;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(algoMutex);
    auto it = algoCache.find(key);
    if (it != algoCache.end()) {
      algo = it->second;
      cached = true;
    }
  }
  if (!cached) {
    if (auto e = cublasLtMatmulPreferenceCreate(&d.pref))
      return blasStatus("gemm: cublasLtMatmulPreferenceCreate", e);
    size_t ws = h.workspace ? h.workspaceBytes : 0;
    uint32_t a32 = alA, b32 = alB, c32 = alC;
    cublasLtMatmulPreferenceSetAttribute(
        d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulPreferenceSetAttribute(
        d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &a32, sizeof a32);
    cublasLtMatmulPreferenceSetAttribute(
        d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &b32, sizeof b32);
    cublasLtMatmulPreferenceSetAttribute(
        d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &c32, sizeof c32);
    cublasLtMatmulPreferenceSetAttribute(
        d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &c32, sizeof c32);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    if (auto e = cublasLtMatmulAlgoGetHeuristic(h.lt, d.op, d.a, d.b, d.c, d.c,
                                                d.pref, 1, &result, &found))
      return blasStatus("gemm: cublasLtMatmulAlgoGetHeuristic", e);
    if (found == 0)
      return Status::error("gemm: cuBLASLt has no algorithm for " +
                           std::to_string(M) + "x" + std::to_string(N) + "x" +
                           std::to_string(K) + " " + floatTypeName(abType));
    algo = result.algo;
    std::lock_guard<std::mutex> lock(algoMutex);
    algoCache.emplace(key, algo);
  }
  return blasStatus("gemm: cublasLtMatmul",
                    cublasLtMatmul(h.lt, d.op, &alpha, B, d.a, A, d.b, &beta,
                                   C, d.c, C, d.c, &algo, h.workspace,
                                   h.workspace ? h.workspaceBytes : 0,
                                   stream));
}

Status matmul(const BlasHandles &h, cudaStream_t stream, FloatType t,
              void *out, const Shape &outShape, const void *a,
              const Shape &aShape, const void *b, const Shape &bShape) {
  Shape as = aShape, bs = bShape;
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const int64_t n = cpu::numElements(outShape);
  if (n == 0)
    return {};
  if (bs.size() == 2) // a batched lhs against one matrix: one large GEMM
    return gemm(h, stream, false, false, cpu::numElements(as) / K, N, K, 1.0f,
                a, b, t, 0.0f, out, t);
  const Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(aBatch.size(), bBatch.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    if (i + aBatch.size() >= rank)
      batch[i] = std::max(batch[i], aBatch[i + aBatch.size() - rank]);
    if (i + bBatch.size() >= rank)
      batch[i] = std::max(batch[i], bBatch[i + bBatch.size() - rank]);
  }
  const int64_t nb = cpu::numElements(batch), na = cpu::numElements(aBatch),
                nbb = cpu::numElements(bBatch);
  // Each operand either spans the whole batch or is one matrix: one
  // strided-batched call (attention's q k^T, p v; a shared weight).
  if ((na == nb || na == 1) && (nbb == nb || nbb == 1))
    return gemm(h, stream, false, false, M, N, K, 1.0f, a, b, t, 0.0f, out, t,
                nb, na == 1 ? 0 : M * K, nbb == 1 ? 0 : K * N, M * N);
  // Partial broadcasting: one call per output matrix.
  const int64_t eb = floatBytes(t);
  for (int64_t i = 0; i < nb; ++i) {
    int64_t rest = i, offA = 0, offB = 0, strideA = 1, strideB = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      if (d + aBatch.size() >= rank) {
        int64_t dim = aBatch[d + aBatch.size() - rank];
        offA += (dim == 1 ? 0 : idx) * strideA;
        strideA *= dim;
      }
      if (d + bBatch.size() >= rank) {
        int64_t dim = bBatch[d + bBatch.size() - rank];
        offB += (dim == 1 ? 0 : idx) * strideB;
        strideB *= dim;
      }
    }
    Status st = gemm(h, stream, false, false, M, N, K, 1.0f,
                     static_cast<const char *>(a) + offA * M * K * eb,
                     static_cast<const char *>(b) + offB * K * N * eb, t, 0.0f,
                     static_cast<char *>(out) + i * M * N * eb, t);
    if (!st.ok())
      return st;
  }
  return {};
}

} // namespace frenzy::cuda::kernels
