//===- VecMath.h - branch-free float math that loops vectorise --*- C++ -*-===//
//
// libm's expf is a scalar call, so a loop over it runs one element at a
// time; softmax, cross-entropy, GELU and SiLU spend most of their time
// there. fastExp is the classic range reduction e^x = 2^n e^r with
// |r| <= ln2/2 and a degree-6 polynomial for e^r (Cephes' coefficients),
// written with selects instead of branches so GCC turns a loop over it into
// SIMD code. Relative error about 2 ulp over the float range; exactly 0
// below -87.3 (so -inf, a masked score, gives 0), +inf above 88.7, NaN
// propagates.
//
// Reductions: the compiler keeps a float sum in program order (it may not
// reassociate), which forbids SIMD; sumFloats keeps kLanes partial sums, a
// shape it maps onto one vector register.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CPU_VECMATH_H
#define FRENZY_RUNTIME_CPU_VECMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace frenzy::cpu {

inline float fastExp(float x) {
  const float hi = 88.72f, lo = -87.33f;
  float c = x > hi ? hi : (x < lo ? lo : x);
  // NaN passes both clamps; a NaN n would make the int conversion and the
  // shift below undefined (UBSan found it on a diverging run). The result
  // is x itself then (last line), so any finite c will do.
  c = c == c ? c : 0.0f;
  // n = round(x / ln2) with the 1.5 * 2^23 trick (round to nearest even).
  const float magic = 12582912.0f;
  float n = (c * 1.44269504088896341f + magic) - magic;
  // r = x - n ln2, ln2 split in two so n * ln2_hi is exact.
  float r = c - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t bits = uint32_t(int32_t(n) + 127) << 23; // 2^n, n in [-126, 128]
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  float y = n > 127.0f ? 2.0f * p * 1.70141183e38f : p * scale;
  y = x < lo ? 0.0f : y;
  y = x > hi ? __builtin_inff() : y;
  return x != x ? x : y;
}

/// tanh through one exp: 1 - 2 / (e^{2u} + 1). Absolute error ~1e-7;
/// saturates to +-1 (exp's overflow and underflow).
inline float fastTanh(float u) { return 1.0f - 2.0f / (1.0f + fastExp(2.0f * u)); }

inline float fastSigmoid(float x) { return 1.0f / (1.0f + fastExp(-x)); }

constexpr int kLanes = 16;

/// Sum of n floats in kLanes partial sums, combined in double.
inline double sumFloats(const float *x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      acc[l] += x[i + l];
  double s = 0;
  for (; i < n; ++i)
    s += x[i];
  for (int l = 0; l < kLanes; ++l)
    s += acc[l];
  return s;
}

/// Sum of x[i] * y[i] in kLanes partial sums, combined in double.
inline double dotFloats(const float *x, const float *y, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      acc[l] += x[i + l] * y[i + l];
  double s = 0;
  for (; i < n; ++i)
    s += double(x[i]) * y[i];
  for (int l = 0; l < kLanes; ++l)
    s += acc[l];
  return s;
}

/// Largest of n >= 1 floats (NaN-free input assumed: a NaN lane is skipped).
inline float maxFloats(const float *x, int64_t n) {
  float acc[kLanes];
  for (int l = 0; l < kLanes; ++l)
    acc[l] = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      acc[l] = acc[l] > x[i + l] ? acc[l] : x[i + l];
  float m = x[0];
  for (; i < n; ++i)
    m = m > x[i] ? m : x[i];
  for (int l = 0; l < kLanes; ++l)
    m = m > acc[l] ? m : acc[l];
  return m;
}

/// y[i] = e^(x[i] - shift); returns the sum of y. y may alias x.
inline double expShiftedSum(float *y, const float *x, int64_t n, float shift) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = fastExp(x[i] - shift);
  return sumFloats(y, n);
}

/// log(sum(exp(x))) of n >= 1 floats, max-shifted; the exponentials are
/// kept only chunk by chunk.
inline double logSumExp(const float *x, int64_t n) {
  constexpr int64_t kChunk = 256;
  float buf[kChunk];
  const float maxv = maxFloats(x, n);
  double sum = 0;
  for (int64_t j = 0; j < n; j += kChunk)
    sum += expShiftedSum(buf, x + j, n - j < kChunk ? n - j : kChunk, maxv);
  return maxv + std::log(sum);
}

} // namespace frenzy::cpu

#endif
