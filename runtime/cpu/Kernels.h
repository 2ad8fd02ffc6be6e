//===- Kernels.h - CPU kernels of the Frenzy runtime ------------*- C++ -*-===//
//
// float32, contiguous, row-major. Backward kernels accumulate (+=) into
// parameter gradients, because a parameter can be used more than once (a
// tied embedding and head), and overwrite activation gradients.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CPU_KERNELS_H
#define FRENZY_RUNTIME_CPU_KERNELS_H

#include <cstdint>

namespace frenzy::cpu {

/// C[M,N] = alpha * op(A) op(B) + beta * C, op transposing when asked.
/// A is [M,K] (or [K,M] transposed), B is [K,N] (or [N,K] transposed).
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
          float alpha, const float *A, const float *B, float beta, float *C);

/// Layer normalisation of N rows of C values. Saves mean and 1/std per row
/// for the backward pass. bias may be null.
void layerNormForward(float *out, float *mean, float *rstd, const float *inp,
                      const float *weight, const float *bias, int64_t N,
                      int64_t C, float eps);
/// dinp is overwritten; dweight and dbias (may be null) accumulate.
void layerNormBackward(float *dinp, float *dweight, float *dbias,
                       const float *dout, const float *inp,
                       const float *weight, const float *mean,
                       const float *rstd, int64_t N, int64_t C);


/// out = softmax(in) over one row of n values (in == out allowed); returns
/// log(sum(exp(in))), the log-partition that cross-entropy needs.
double softmaxRow(float *out, const float *in, int64_t n);

/// Mean cross-entropy of N rows of V logits against integer targets; rows
/// whose target equals ignoreIndex do not count.
float softmaxCrossEntropyLoss(const float *logits, const int64_t *targets,
                              int64_t N, int64_t V, int64_t ignoreIndex);
/// dlogits = dloss * (softmax(logits) - onehot) / (rows counted), the
/// softmax recomputed from the logits; overwritten (ignored rows get 0).
void softmaxCrossEntropyBackward(float *dlogits, const float *logits,
                                 const int64_t *targets, int64_t N, int64_t V,
                                 int64_t ignoreIndex, float dloss);

/// Embedding lookup: out[n, :] = table[ids[n], :] for N ids of width C.
/// Returns false (and writes nothing further) on an id outside [0, V).
bool embeddingForward(float *out, const float *table, const int64_t *ids,
                      int64_t N, int64_t V, int64_t C);
/// dtable[ids[n], :] += dout[n, :] (accumulates: tied weights add up).
void embeddingBackward(float *dtable, const float *dout, const int64_t *ids,
                       int64_t N, int64_t C);

/// Scaled dot-product attention over BH independent heads:
/// q [BH, Tq, D], k [BH, Tk, D], v [BH, Tk, Dv] -> out [BH, Tq, Dv].
struct AttentionConfig {
  int64_t BH = 1, Tq = 1, Tk = 1, D = 1, Dv = 1;
  float scale = 1.0f;
  bool causal = false;          // mask key j > query i
  const uint8_t *mask = nullptr; // true = masked out; [maskHeads, Tq, Tk]
  const float *bias = nullptr;   // added to the scores; [maskHeads, Tq, Tk]
  int64_t maskHeads = 1;         // 1 (shared by all heads) or BH
  float dropout = 0.0f;          // on the probabilities, inverted
  uint64_t seed = 0;             // dropout stream (see dropoutUniform)
  /// Where this kernel's heads sit in the whole batch's dropout stream, so
  /// a micro-batch, or a TP rank's share of the heads, draws the decisions
  /// of the unsplit run: local head bh is global head
  /// (firstRow + bh / headsLocal) * headsTotal + headStart + bh % headsLocal.
  int64_t headsLocal = 1, headsTotal = 1, headStart = 0, firstRow = 0;
  uint64_t globalHead(int64_t bh) const {
    return uint64_t((firstRow + bh / headsLocal) * headsTotal + headStart +
                    bh % headsLocal);
  }
};
/// probs [BH, Tq, Tk], when not null, receives the softmax (before
/// dropout) for attentionBackward. The kernels keep their own few rows of
/// work memory.
void attentionForward(float *out, float *probs, const float *q, const float *k,
                      const float *v, const AttentionConfig &c);
/// dq, dk, dv are overwritten. probs is attentionForward's, or null to
/// recompute it row by row from q and k (cheaper than storing it).
void attentionBackward(float *dq, float *dk, float *dv, const float *dout,
                       const float *probs, const float *q, const float *k,
                       const float *v, const AttentionConfig &c);

struct AdamWConfig {
  float lr = 3e-4f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weightDecay = 0.0f;
  float gradScale = 1.0f; // the gradient-clipping factor, applied on the fly
};
/// One AdamW step (decoupled weight decay) at step t >= 1.
void adamwUpdate(float *param, const float *grad, float *m, float *v,
                 int64_t n, const AdamWConfig &cfg, int64_t t);

} // namespace frenzy::cpu

#endif
