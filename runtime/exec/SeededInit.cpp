//===- SeededInit.cpp - initial weights from a seed -----------------------===//
#include "SeededInit.h"

#include <cmath>

namespace frenzy::rt {

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool seededInitApplies(const plan::ParamSource &p, const Tensor &full) {
  return p.trainable() && full.shape.size() >= 2 && full.dtype == plan::F32;
}

void seededInit(const plan::ParamSource &p, Tensor &full, uint64_t seed) {
  uint64_t stream = mix(seed * 0x9E3779B97F4A7C15ull + 1);
  for (char c : p.name()) // FNV-1a of the name: one stream per parameter
    stream = (stream ^ uint64_t(uint8_t(c))) * 0x100000001B3ull;
  float *w = full.f32();
  for (int64_t i = 0, n = full.numel(); i < n; ++i) {
    // Two uniforms in (0, 1] from element i's counter, one normal.
    double u1 = (double(mix(stream + 2 * uint64_t(i)) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = double(mix(stream + 2 * uint64_t(i) + 1) >> 11) / 9007199254740992.0;
    w[i] = float(0.02 * std::sqrt(-2.0 * std::log(u1)) *
                 std::cos(2.0 * M_PI * u2));
  }
}

} // namespace frenzy::rt
