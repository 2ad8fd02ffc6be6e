//===- RMSNorm.cpp - root-mean-square normalisation -----------------------===//
//
// y = x * r * w with r = 1 / sqrt(mean(x^2) + eps). Backward:
// dx = r * (dy * w) - x * r^3 / C * sum(dy * w * x); dw += dy * x * r.
//
//===----------------------------------------------------------------------===//
#include "TensorOps.h"

#include <cmath>

namespace frenzy::cpu {

namespace {
double rms(const float *x, int64_t C, float eps) {
  double ss = 0;
  for (int64_t c = 0; c < C; ++c)
    ss += double(x[c]) * x[c];
  return 1.0 / std::sqrt(ss / double(C) + eps);
}
} // namespace

void rmsNormForward(float *out, const float *x, const float *scale, int64_t N,
                    int64_t C, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float *xr = x + n * C;
    float r = float(rms(xr, C, eps));
    for (int64_t c = 0; c < C; ++c)
      out[n * C + c] = xr[c] * r * scale[c];
  }
}

void rmsNormBackward(float *dx, float *dscale, const float *dout,
                     const float *x, const float *scale, int64_t N, int64_t C,
                     float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float *xr = x + n * C, *dy = dout + n * C;
    double r = rms(xr, C, eps);
    double dot = 0;
    for (int64_t c = 0; c < C; ++c)
      dot += double(dy[c]) * scale[c] * xr[c];
    double k = dot * r * r * r / double(C);
    for (int64_t c = 0; c < C; ++c) {
      dx[n * C + c] = float(r * dy[c] * scale[c] - xr[c] * k);
      dscale[c] += float(dy[c] * xr[c] * r);
    }
  }
}

} // namespace frenzy::cpu
