//===- Dropout.cpp - counter-based inverted dropout -----------------------===//
//
// The keep decision of element i is a pure function of (seed, i): a
// splitmix64 hash. Backward regenerates the mask from the same seed, so no
// mask is stored, and runs are reproducible for a given seed.
//
//===----------------------------------------------------------------------===//
#include "TensorOps.h"

#include <cstring>

namespace frenzy::cpu {

float dropoutUniform(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(z >> 40) * (1.0f / 16777216.0f); // 24 random bits
}

void dropoutF32(float *out, const float *in, int64_t n, float ratio,
                uint64_t seed, uint64_t first) {
  if (ratio <= 0.0f) {
    if (out != in)
      std::memcpy(out, in, n * sizeof(float));
    return;
  }
  const float keep = 1.0f / (1.0f - ratio);
  for (int64_t i = 0; i < n; ++i)
    out[i] = dropoutUniform(seed, first + uint64_t(i)) < ratio ? 0.0f : in[i] * keep;
}

} // namespace frenzy::cpu
