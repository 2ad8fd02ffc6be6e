//===- TensorOpsReference.h - naive references for TensorOps tests -*- C++ -*-//
//
// Index arithmetic and error measures shared by the TensorOps tests: the
// references they compare against are written element by element with these.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_UNITTESTS_RUNTIME_TENSOROPSREFERENCE_H
#define FRENZY_UNITTESTS_RUNTIME_TENSOROPSREFERENCE_H

#include "TensorOps.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace frenzy::cpu;

namespace frenzy::testref {

inline std::vector<float> randomFloats(int64_t n, unsigned seed, float lo = -1.0f,
                                float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  return v;
}

inline std::vector<int64_t> randomInts(int64_t n, unsigned seed, int64_t lo,
                                int64_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(lo, hi);
  std::vector<int64_t> v(n);
  for (int64_t &x : v)
    x = u(rng);
  return v;
}

/// Row-major index -> multi-index.
inline std::vector<int64_t> unravel(int64_t i, const Shape &s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t> &idx, const Shape &s) {
  int64_t off = 0;
  for (size_t d = 0; d < s.size(); ++d)
    off = off * s[d] + idx[d];
  return off;
}

/// Flat offset of an output multi-index in a right-aligned broadcast input.
inline int64_t broadcastOffset(const std::vector<int64_t> &outIdx, const Shape &in) {
  int64_t off = 0;
  size_t shift = outIdx.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    off = off * in[d] + (in[d] == 1 ? 0 : outIdx[d + shift]);
  return off;
}

inline Shape broadcastShape(const Shape &a, const Shape &b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    size_t o = out.size() - 1 - i;
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[o] = std::max(da, db);
  }
  return out;
}

/// Shape pairs that broadcast in every way the kernels distinguish.
const std::vector<std::pair<Shape, Shape>> kBroadcastPairs = {
    {{2, 3, 4}, {2, 3, 4}}, {{3, 1, 5}, {4, 1}}, {{2, 3, 4}, {4}},
    {{4}, {2, 3, 4}},       {{2, 3, 4}, {}},     {{}, {3, 2}},
    {{}, {}},               {{2, 1, 3}, {1, 4, 1}}, {{5, 1}, {1, 1}}};

/// dL/dx by central differences in double (L evaluated through the kernel).
inline std::vector<double> numericGradient(std::vector<float> x,
                                    const std::function<double(const std::vector<float> &)> &L,
                                    float h = 1e-3f) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float saved = x[i];
    x[i] = saved + h;
    double up = L(x);
    x[i] = saved - h;
    double down = L(x);
    x[i] = saved;
    g[i] = (up - down) / (double(saved + h) - double(saved - h));
  }
  return g;
}

inline double relativeError(const std::vector<float> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

inline double dot(const std::vector<float> &a, const std::vector<float> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += double(a[i]) * b[i];
  return s;
}

} // namespace frenzy::testref

using namespace frenzy::testref;

#endif
