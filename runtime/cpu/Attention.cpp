//===- Attention.cpp - scaled dot-product attention, forward and backward -===//
//
// Per head: S = scale * q k^T + bias, masked entries -inf, P = softmax(S),
// Pd = dropout(P), out = Pd v. probs keeps P (before dropout); the dropout
// mask is regenerated from (seed, element) in backward, never stored.
// Backward: dv = Pd^T dout; dPd = dout v^T; dP = dropout(dPd);
// dS = P * (dP - rowsum(dP * P)); dq = scale dS k; dk = scale dS^T q.
// The products go through GEMM.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "TensorOps.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace frenzy::cpu {

namespace {
/// Applies inverted dropout in place to one head's [Tq, Tk] matrix.
void dropoutHead(float *m, const AttentionConfig &c, int64_t h) {
  if (c.dropout <= 0.0f)
    return;
  const float keep = 1.0f / (1.0f - c.dropout);
  const uint64_t base = c.globalHead(h) * c.Tq * c.Tk;
  for (int64_t i = 0; i < c.Tq * c.Tk; ++i)
    m[i] = dropoutUniform(c.seed, base + i) < c.dropout ? 0.0f : m[i] * keep;
}
} // namespace

void attentionForward(float *out, float *probs, const float *q, const float *k,
                      const float *v, const AttentionConfig &c,
                      float *scratch) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t Tq = c.Tq, Tk = c.Tk, D = c.D, Dv = c.Dv;
  for (int64_t h = 0; h < c.BH; ++h) {
    float *P = probs + h * Tq * Tk;
    gemm(false, true, Tq, Tk, D, c.scale, q + h * Tq * D, k + h * Tk * D, 0.0f,
         P);
    const int64_t mh = (c.maskHeads > 1 ? h : 0) * Tq * Tk;
    for (int64_t i = 0; i < Tq; ++i) {
      float *row = P + i * Tk;
      for (int64_t j = 0; j < Tk; ++j) {
        if (c.bias)
          row[j] += c.bias[mh + i * Tk + j];
        if ((c.causal && j > i) || (c.mask && c.mask[mh + i * Tk + j]))
          row[j] = ninf;
      }
      if (*std::max_element(row, row + Tk) == ninf) {
        std::fill(row, row + Tk, 0.0f); // a fully masked row attends to nothing
        continue;
      }
      softmaxRow(row, row, Tk);
    }
    const float *Pd = P;
    if (c.dropout > 0.0f) {
      std::copy(P, P + Tq * Tk, scratch);
      dropoutHead(scratch, c, h);
      Pd = scratch;
    }
    gemm(false, false, Tq, Dv, Tk, 1.0f, Pd, v + h * Tk * Dv, 0.0f,
         out + h * Tq * Dv);
  }
}

void attentionBackward(float *dq, float *dk, float *dv, const float *dout,
                       const float *probs, const float *q, const float *k,
                       const float *v, const AttentionConfig &c,
                       float *scratch) {
  const int64_t Tq = c.Tq, Tk = c.Tk, D = c.D, Dv = c.Dv;
  for (int64_t h = 0; h < c.BH; ++h) {
    const float *P = probs + h * Tq * Tk, *dO = dout + h * Tq * Dv;
    float *dS = scratch, *Pd = scratch + Tq * Tk;
    const float *PdUsed = P;
    if (c.dropout > 0.0f) {
      std::copy(P, P + Tq * Tk, Pd);
      dropoutHead(Pd, c, h);
      PdUsed = Pd;
    }
    gemm(true, false, Tk, Dv, Tq, 1.0f, PdUsed, dO, 0.0f, dv + h * Tk * Dv);
    gemm(false, true, Tq, Tk, Dv, 1.0f, dO, v + h * Tk * Dv, 0.0f, dS);
    dropoutHead(dS, c, h);
    for (int64_t i = 0; i < Tq; ++i) {
      const float *p = P + i * Tk;
      float *d = dS + i * Tk;
      double dot = 0;
      for (int64_t j = 0; j < Tk; ++j)
        dot += double(d[j]) * p[j];
      for (int64_t j = 0; j < Tk; ++j)
        d[j] = p[j] * (d[j] - float(dot)); // masked entries have p = 0
    }
    gemm(false, false, Tq, D, Tk, c.scale, dS, k + h * Tk * D, 0.0f,
         dq + h * Tq * D);
    gemm(true, false, Tk, D, Tq, c.scale, dS, q + h * Tq * D, 0.0f,
         dk + h * Tk * D);
  }
}

} // namespace frenzy::cpu
