//===- Gemm.cpp - matrix multiply through OpenBLAS -------------------------===//
#include "Kernels.h"

#include <cblas.h>

namespace frenzy::cpu {

void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
          float alpha, const float *A, const float *B, float beta, float *C) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, A,
              transA ? M : K, B, transB ? K : N, beta, C, N);
}

} // namespace frenzy::cpu
