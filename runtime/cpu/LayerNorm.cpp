//===- LayerNorm.cpp - layer normalisation, forward and backward ----------===//
#include "Kernels.h"

#include <cmath>

namespace frenzy::cpu {

void layerNormForward(float *out, float *mean, float *rstd, const float *inp,
                      const float *weight, const float *bias, int64_t N,
                      int64_t C, float eps) {
  for (int64_t i = 0; i < N; ++i) {
    const float *x = inp + i * C;
    // Two passes over the row: the one-pass variance loses digits.
    double m = 0;
    for (int64_t c = 0; c < C; ++c)
      m += x[c];
    m /= C;
    double var = 0;
    for (int64_t c = 0; c < C; ++c)
      var += (x[c] - m) * (x[c] - m);
    var /= C;
    float s = 1.0f / std::sqrt(float(var) + eps);
    float *y = out + i * C;
    for (int64_t c = 0; c < C; ++c)
      y[c] = float(x[c] - m) * s * weight[c] + (bias ? bias[c] : 0.0f);
    mean[i] = float(m);
    rstd[i] = s;
  }
}

void layerNormBackward(float *dinp, float *dweight, float *dbias,
                       const float *dout, const float *inp,
                       const float *weight, const float *mean,
                       const float *rstd, int64_t N, int64_t C) {
  for (int64_t i = 0; i < N; ++i) {
    const float *x = inp + i * C, *dy = dout + i * C;
    float m = mean[i], s = rstd[i];
    // dxhat = dy * w; dx = s * (dxhat - mean(dxhat) - xhat * mean(dxhat*xhat))
    double sumD = 0, sumDX = 0;
    for (int64_t c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float d = dy[c] * weight[c];
      sumD += d;
      sumDX += d * xhat;
      dweight[c] += dy[c] * xhat;
      if (dbias)
        dbias[c] += dy[c];
    }
    float meanD = float(sumD / C), meanDX = float(sumDX / C);
    float *dx = dinp + i * C;
    for (int64_t c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      dx[c] = s * (dy[c] * weight[c] - meanD - xhat * meanDX);
    }
  }
}

} // namespace frenzy::cpu
