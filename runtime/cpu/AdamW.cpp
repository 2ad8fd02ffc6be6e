//===- AdamW.cpp - AdamW with decoupled weight decay -----------------------===//
#include "Kernels.h"

#include <cmath>

namespace frenzy::cpu {

void adamwUpdate(float *param, const float *grad, float *m, float *v,
                 int64_t n, const AdamWConfig &cfg, int64_t t) {
  // Bias corrections fold into the step size (Loshchilov & Hutter, Alg. 2).
  // The config is copied into locals: read through the reference inside the
  // loop, it could alias param/m/v, and the loop would not vectorise.
  const float c1 = 1.0f - std::pow(cfg.beta1, float(t));
  const float c2 = 1.0f - std::pow(cfg.beta2, float(t));
  const float b1 = cfg.beta1, b2 = cfg.beta2, lr = cfg.lr, eps = cfg.eps;
  const float wd = cfg.weightDecay, gs = cfg.gradScale;
  for (int64_t i = 0; i < n; ++i) {
    float g = grad[i] * gs;
    float mi = b1 * m[i] + (1.0f - b1) * g;
    float vi = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float mhat = mi / c1, vhat = vi / c2;
    param[i] -= lr * (mhat / (std::sqrt(vhat) + eps) + wd * param[i]);
  }
}

} // namespace frenzy::cpu
