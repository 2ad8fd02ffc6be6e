//===- SoftmaxCrossEntropy.cpp - row softmax and mean cross-entropy --------===//
//
// Rows are max-shifted for exp's range. exp runs through VecMath's fastExp
// so each row is one SIMD sweep; sums use partial accumulators combined in
// double. The gradient recomputes the row softmax straight into dlogits
// (no probabilities buffer): one exp sweep and one scaling sweep per row.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "VecMath.h"

#include <algorithm>
#include <cmath>

namespace frenzy::cpu {

double softmaxRow(float *out, const float *in, int64_t n) {
  const float maxv = maxFloats(in, n);
  const double sum = expShiftedSum(out, in, n, maxv);
  const float inv = float(1.0 / sum);
  for (int64_t j = 0; j < n; ++j)
    out[j] *= inv;
  return maxv + std::log(sum);
}

static int64_t countedRows(const int64_t *targets, int64_t N,
                           int64_t ignoreIndex) {
  int64_t n = 0;
  for (int64_t i = 0; i < N; ++i)
    n += targets[i] != ignoreIndex;
  return n;
}

float softmaxCrossEntropyLoss(const float *logits, const int64_t *targets,
                              int64_t N, int64_t V, int64_t ignoreIndex) {
  double loss = 0;
  for (int64_t i = 0; i < N; ++i)
    if (targets[i] != ignoreIndex)
      loss += logSumExp(logits + i * V, V) - logits[i * V + targets[i]];
  int64_t counted = countedRows(targets, N, ignoreIndex);
  return counted ? float(loss / counted) : 0.0f;
}

void softmaxCrossEntropyBackward(float *dlogits, const float *logits,
                                 const int64_t *targets, int64_t N, int64_t V,
                                 int64_t ignoreIndex, float dloss) {
  int64_t counted = countedRows(targets, N, ignoreIndex);
  float scale = counted ? dloss / counted : 0.0f;
  for (int64_t i = 0; i < N; ++i) {
    float *d = dlogits + i * V;
    if (targets[i] == ignoreIndex) {
      std::fill(d, d + V, 0.0f);
      continue;
    }
    const float *z = logits + i * V;
    const double sum = expShiftedSum(d, z, V, maxFloats(z, V));
    const float s = float(scale / sum);
    for (int64_t j = 0; j < V; ++j)
      d[j] *= s;
    d[targets[i]] -= scale;
  }
}

} // namespace frenzy::cpu
