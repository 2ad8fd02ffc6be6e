//===- Gelu.cpp - GELU (tanh approximation), forward and backward ---------===//
#include "Kernels.h"

#include <cmath>

namespace frenzy::cpu {

static constexpr float kSqrt2OverPi = 0.7978845608028654f;
static constexpr float kCubic = 0.044715f;

void geluTanhForward(float *out, const float *inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float x = inp[i];
    out[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
}

void geluTanhBackward(float *dinp, const float *inp, const float *dout,
                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float x = inp[i];
    float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    float t = std::tanh(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    float grad = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
    dinp[i] = grad * dout[i];
  }
}

} // namespace frenzy::cpu
