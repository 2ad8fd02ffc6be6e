//===- AdamW.cpp - AdamW with decoupled weight decay -----------------------===//
#include "Kernels.h"

#include <cmath>

namespace frenzy::cpu {

void adamwUpdate(float *param, const float *grad, float *m, float *v,
                 int64_t n, const AdamWConfig &cfg, int64_t t) {
  // Bias corrections fold into the step size (Loshchilov & Hutter, Alg. 2).
  float c1 = 1.0f - std::pow(cfg.beta1, float(t));
  float c2 = 1.0f - std::pow(cfg.beta2, float(t));
  for (int64_t i = 0; i < n; ++i) {
    float g = grad[i] * cfg.gradScale;
    m[i] = cfg.beta1 * m[i] + (1.0f - cfg.beta1) * g;
    v[i] = cfg.beta2 * v[i] + (1.0f - cfg.beta2) * g * g;
    float mhat = m[i] / c1, vhat = v[i] / c2;
    param[i] -= cfg.lr * (mhat / (std::sqrt(vhat) + cfg.eps) +
                          cfg.weightDecay * param[i]);
  }
}

} // namespace frenzy::cpu
