//===- SoftmaxCrossEntropy.cpp - fused softmax + mean cross-entropy --------===//
#include "Kernels.h"

#include <algorithm>
#include <cmath>

namespace frenzy::cpu {

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
    float *p = probs + i * V;
    float maxv = *std::max_element(z, z + V); // shift for exp's range
    double sum = 0;
    for (int64_t j = 0; j < V; ++j) {
      p[j] = std::exp(z[j] - maxv);
      sum += p[j];
    }
    for (int64_t j = 0; j < V; ++j)
      p[j] = float(p[j] / sum);
    if (targets[i] != ignoreIndex)
      loss -= (z[targets[i]] - maxv) - std::log(sum);
  }
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
