//===- Attention.cpp - scaled dot-product attention, forward and backward -===//
//
// Per head: S = scale * q k^T, P = softmax(S masked), out = P v. The
// backward pass recomputes nothing: P is saved. With dP = dout v^T,
// dS = P * (dP - rowsum(dP * P)); dq = scale * dS k; dk = scale * dS^T q;
// dv = P^T dout. The products go through GEMM.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace frenzy::cpu {

void attentionForward(float *out, float *probs, const float *q, const float *k,
                      const float *v, const uint8_t *mask, bool causal,
                      int64_t BH, int64_t Tq, int64_t Tk, int64_t D,
                      int64_t Dv, float scale) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t h = 0; h < BH; ++h) {
    float *P = probs + h * Tq * Tk;
    gemm(false, true, Tq, Tk, D, scale, q + h * Tq * D, k + h * Tk * D, 0.0f, P);
    for (int64_t i = 0; i < Tq; ++i) {
      float *row = P + i * Tk;
      for (int64_t j = 0; j < Tk; ++j)
        if ((causal && j > i) || (mask && mask[i * Tk + j]))
          row[j] = ninf;
      if (*std::max_element(row, row + Tk) == ninf) {
        std::fill(row, row + Tk, 0.0f); // a fully masked row attends to nothing
        continue;
      }
      softmaxRow(row, row, Tk);
    }
    gemm(false, false, Tq, Dv, Tk, 1.0f, P, v + h * Tk * Dv, 0.0f,
         out + h * Tq * Dv);
  }
}

void attentionBackward(float *dq, float *dk, float *dv, const float *dout,
                       const float *probs, const float *q, const float *k,
                       const float *v, int64_t BH, int64_t Tq, int64_t Tk,
                       int64_t D, int64_t Dv, float scale, float *scratch) {
  for (int64_t h = 0; h < BH; ++h) {
    const float *P = probs + h * Tq * Tk, *dO = dout + h * Tq * Dv;
    float *dS = scratch;
    gemm(true, false, Tk, Dv, Tq, 1.0f, P, dO, 0.0f, dv + h * Tk * Dv);
    gemm(false, true, Tq, Tk, Dv, 1.0f, dO, v + h * Tk * Dv, 0.0f, dS);
    for (int64_t i = 0; i < Tq; ++i) {
      const float *p = P + i * Tk;
      float *d = dS + i * Tk;
      double dot = 0;
      for (int64_t j = 0; j < Tk; ++j)
        dot += double(d[j]) * p[j];
      for (int64_t j = 0; j < Tk; ++j)
        d[j] = p[j] * (d[j] - float(dot)); // masked entries have p = 0
    }
    gemm(false, false, Tq, D, Tk, scale, dS, k + h * Tk * D, 0.0f, dq + h * Tq * D);
    gemm(true, false, Tk, D, Tq, scale, dS, q + h * Tq * D, 0.0f, dk + h * Tk * D);
  }
}

} // namespace frenzy::cpu
