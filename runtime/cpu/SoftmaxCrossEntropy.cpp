//===- SoftmaxCrossEntropy.cpp - row softmax and mean cross-entropy --------===//
#include "Kernels.h"

#include <algorithm>
#include <cmath>

namespace frenzy::cpu {

double softmaxRow(float *out, const float *in, int64_t n) {
  float maxv = *std::max_element(in, in + n); // shift for exp's range
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    out[j] = std::exp(in[j] - maxv);
    sum += out[j];
  }
  const float inv = float(1.0 / sum);
  for (int64_t j = 0; j < n; ++j)
    out[j] *= inv;
  return maxv + std::log(sum);
}

/// log(sum(exp(in))) of one row without writing the probabilities.
static double logSumExpRow(const float *in, int64_t n) {
  float maxv = *std::max_element(in, in + n);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += std::exp(in[j] - maxv);
  return maxv + std::log(sum);
}

static int64_t countedRows(const int64_t *targets, int64_t N,
                           int64_t ignoreIndex) {
  int64_t n = 0;
  for (int64_t i = 0; i < N; ++i)
    n += targets[i] != ignoreIndex;
  return n;
}

float softmaxCrossEntropyForward(float *probs, const float *logits,
                                 const int64_t *targets, int64_t N, int64_t V,
                                 int64_t ignoreIndex) {
  double loss = 0;
  for (int64_t i = 0; i < N; ++i) {
    const float *z = logits + i * V;
    double logZ = softmaxRow(probs + i * V, z, V);
    if (targets[i] != ignoreIndex)
      loss += logZ - z[targets[i]];
  }
  int64_t counted = countedRows(targets, N, ignoreIndex);
  return counted ? float(loss / counted) : 0.0f;
}

float softmaxCrossEntropyLoss(const float *logits, const int64_t *targets,
                              int64_t N, int64_t V, int64_t ignoreIndex) {
  double loss = 0;
  for (int64_t i = 0; i < N; ++i)
    if (targets[i] != ignoreIndex)
      loss += logSumExpRow(logits + i * V, V) - logits[i * V + targets[i]];
  int64_t counted = countedRows(targets, N, ignoreIndex);
  return counted ? float(loss / counted) : 0.0f;
}

void softmaxCrossEntropyBackward(float *dlogits, const float *probs,
                                 const int64_t *targets, int64_t N, int64_t V,
                                 int64_t ignoreIndex, float dloss) {
  int64_t counted = countedRows(targets, N, ignoreIndex);
  float scale = counted ? dloss / counted : 0.0f;
  for (int64_t i = 0; i < N; ++i) {
    float *d = dlogits + i * V;
    const float *p = probs + i * V;
    if (targets[i] == ignoreIndex) {
      std::fill(d, d + V, 0.0f);
      continue;
    }
    for (int64_t j = 0; j < V; ++j)
      d[j] = scale * (p[j] - (j == targets[i] ? 1.0f : 0.0f));
  }
}

} // namespace frenzy::cpu
