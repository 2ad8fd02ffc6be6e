//===- Embedding.cpp - table lookup, forward and backward ------------------===//
#include "Kernels.h"

#include <cstring>

namespace frenzy::cpu {

bool embeddingForward(float *out, const float *table, const int64_t *ids,
                      int64_t N, int64_t V, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    if (ids[n] < 0 || ids[n] >= V)
      return false; // a token id outside the vocabulary: bad data, not UB
    std::memcpy(out + n * C, table + ids[n] * C, C * sizeof(float));
  }
  return true;
}

void embeddingBackward(float *dtable, const float *dout, const int64_t *ids,
                       int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    float *row = dtable + ids[n] * C;
    const float *d = dout + n * C;
    for (int64_t c = 0; c < C; ++c)
      row[c] += d[c];
  }
}

} // namespace frenzy::cpu
