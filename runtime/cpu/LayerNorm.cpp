//===- LayerNorm.cpp - layer normalisation, forward and backward ----------===//
//
// Row statistics use VecMath's partial-sum reductions so each sweep over a
// row is SIMD; the variance takes a second pass over the row (the one-pass
// formula loses digits when the mean is large against the spread).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "VecMath.h"

#include <cmath>
#include <vector>

namespace frenzy::cpu {

void layerNormForward(float *out, float *mean, float *rstd, const float *inp,
                      const float *weight, const float *bias, int64_t N,
                      int64_t C, float eps) {
  std::vector<float> centred(C);
  for (int64_t i = 0; i < N; ++i) {
    const float *x = inp + i * C;
    const float m = float(sumFloats(x, C) / C);
    for (int64_t c = 0; c < C; ++c)
      centred[c] = x[c] - m;
    const double var = dotFloats(centred.data(), centred.data(), C) / C;
    const float s = 1.0f / std::sqrt(float(var) + eps);
    float *y = out + i * C;
    if (bias)
      for (int64_t c = 0; c < C; ++c)
        y[c] = centred[c] * s * weight[c] + bias[c];
    else
      for (int64_t c = 0; c < C; ++c)
        y[c] = centred[c] * s * weight[c];
    mean[i] = m;
    rstd[i] = s;
  }
}

void layerNormBackward(float *dinp, float *dweight, float *dbias,
                       const float *dout, const float *inp,
                       const float *weight, const float *mean,
                       const float *rstd, int64_t N, int64_t C) {
  std::vector<float> xhat(C), d(C);
  for (int64_t i = 0; i < N; ++i) {
    const float *x = inp + i * C, *dy = dout + i * C;
    const float m = mean[i], s = rstd[i];
    // dxhat = dy * w; dx = s * (dxhat - mean(dxhat) - xhat * mean(dxhat*xhat))
    for (int64_t c = 0; c < C; ++c) {
      xhat[c] = (x[c] - m) * s;
      d[c] = dy[c] * weight[c];
      dweight[c] += dy[c] * xhat[c];
    }
    if (dbias)
      for (int64_t c = 0; c < C; ++c)
        dbias[c] += dy[c];
    const float meanD = float(sumFloats(d.data(), C) / C);
    const float meanDX = float(dotFloats(d.data(), xhat.data(), C) / C);
    float *dx = dinp + i * C;
    for (int64_t c = 0; c < C; ++c)
      dx[c] = s * (d[c] - meanD - xhat[c] * meanDX);
  }
}

} // namespace frenzy::cpu
