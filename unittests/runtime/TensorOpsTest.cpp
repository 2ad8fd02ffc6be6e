//===- TensorOpsTest.cpp - shape-generic CPU kernels vs naive references --===//
//
// Each kernel of runtime/cpu/TensorOps.h against a direct, index-by-index
// reference written here, on shapes that exercise broadcasting on both
// sides, rank-0 operands, negative indices and steps, and odd sizes.
// Gradient kernels are covered end to end by unittests/GradCheckTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "TensorOps.h"

#include <gtest/gtest.h>
#include <cmath>
#include <random>

using namespace frenzy::cpu;

namespace {

std::vector<float> randomFloats(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  return v;
}

/// Row-major index -> multi-index.
std::vector<int64_t> unravel(int64_t i, const Shape &s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

/// Flat offset of an output multi-index in a right-aligned broadcast input.
int64_t broadcastOffset(const std::vector<int64_t> &outIdx, const Shape &in) {
  int64_t off = 0;
  size_t shift = outIdx.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    off = off * in[d] + (in[d] == 1 ? 0 : outIdx[d + shift]);
  return off;
}

} // namespace

TEST(TensorOps, BinaryBroadcastsBothSides) {
  Shape a = {3, 1, 5}, b = {4, 1}, out = {3, 4, 5};
  auto x = randomFloats(numElements(a), 1), y = randomFloats(numElements(b), 2);
  std::vector<float> z(numElements(out));
  binaryF32(BinaryKind::Sub, z.data(), out, x.data(), a, y.data(), b);
  for (int64_t i = 0; i < numElements(out); ++i) {
    auto idx = unravel(i, out);
    EXPECT_FLOAT_EQ(z[i], x[broadcastOffset(idx, a)] - y[broadcastOffset(idx, b)]);
  }
  // A rank-0 operand.
  float s = 2.5f;
  binaryF32(BinaryKind::Mul, z.data(), out, x.data(), a, &s, {});
  for (int64_t i = 0; i < numElements(out); ++i)
    EXPECT_FLOAT_EQ(z[i], x[broadcastOffset(unravel(i, out), a)] * 2.5f);
}

TEST(TensorOps, CompareWhereAndCast) {
  Shape a = {2, 3}, b = {3};
  std::vector<int64_t> x = {1, 5, 3, 4, 2, 6}, y = {3, 3, 3};
  std::vector<uint8_t> m(6);
  compareI64(CompareKind::Less, m.data(), a, x.data(), a, y.data(), b);
  EXPECT_EQ(m, (std::vector<uint8_t>{1, 0, 0, 0, 1, 0}));
  std::vector<float> p = {1, 2, 3, 4, 5, 6}, q = {-1}, r(6);
  where(r.data(), a, m.data(), a, p.data(), a, q.data(), {1}, 4);
  EXPECT_EQ(r, (std::vector<float>{1, -1, -1, -1, 5, -1}));
  std::vector<float> f = {-1.7f, 0.0f, 2.9f};
  std::vector<int64_t> i(3);
  cast(i.data(), DType::I64, f.data(), DType::F32, 3);
  EXPECT_EQ(i, (std::vector<int64_t>{-1, 0, 2})); // toward zero
  std::vector<uint8_t> bits(3);
  cast(bits.data(), DType::Bool, f.data(), DType::F32, 3);
  EXPECT_EQ(bits, (std::vector<uint8_t>{1, 0, 1}));
}

TEST(TensorOps, ReduceAndSumToShape) {
  Shape s = {2, 3, 4};
  auto x = randomFloats(24, 3);
  std::vector<float> out(3);
  reduceF32(ReduceKind::Mean, out.data(), x.data(), s, {0, 2});
  for (int64_t j = 0; j < 3; ++j) {
    double ref = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k)
        ref += x[(i * 3 + j) * 4 + k];
    EXPECT_NEAR(out[j], ref / 8, 1e-6);
  }
  reduceF32(ReduceKind::Max, out.data(), x.data(), s, {0, 2});
  for (int64_t j = 0; j < 3; ++j) {
    float ref = -1e30f;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k)
        ref = std::max(ref, x[(i * 3 + j) * 4 + k]);
    EXPECT_EQ(out[j], ref);
  }
  // sumToShape is the adjoint of broadcasting [3, 1] to [2, 3, 4].
  std::vector<float> col(3);
  sumToShapeF32(col.data(), {3, 1}, x.data(), s);
  for (int64_t j = 0; j < 3; ++j) {
    double ref = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k)
        ref += x[(i * 3 + j) * 4 + k];
    EXPECT_NEAR(col[j], ref, 1e-5);
  }
}

TEST(TensorOps, TransposeExpandSlice) {
  Shape s = {2, 3, 4};
  auto x = randomFloats(24, 4);
  std::vector<float> t(24);
  transpose(t.data(), x.data(), s, {2, 0, 1}, 4); // out [4, 2, 3]
  for (int64_t i = 0; i < 24; ++i) {
    auto o = unravel(i, {4, 2, 3});
    EXPECT_EQ(t[i], x[(o[1] * 3 + o[2]) * 4 + o[0]]);
  }
  transpose(t.data(), x.data(), s, {1, 0, 2}, 4); // inner run kept
  for (int64_t i = 0; i < 24; ++i) {
    auto o = unravel(i, {3, 2, 4});
    EXPECT_EQ(t[i], x[(o[1] * 3 + o[0]) * 4 + o[2]]);
  }
  std::vector<float> e(2 * 3 * 4);
  std::vector<float> col = {1, 2, 3};
  expand(e.data(), s, col.data(), {3, 1}, 4);
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(e[i], col[unravel(i, s)[1]]);
  // x[1:2, ::-2 from 2, 1:4:2] -> [1, 2, 2]
  std::vector<float> sl(4);
  slice(sl.data(), x.data(), s, {1, 2, 1}, {2, -1, 4}, {1, -2, 2}, 4);
  int64_t rows[] = {2, 0}, cols[] = {1, 3};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      EXPECT_EQ(sl[r * 2 + c], x[(1 * 3 + rows[r]) * 4 + cols[c]]);
}

TEST(TensorOps, ConcatSplitRoundTripAndGather) {
  Shape a = {2, 1, 3}, b = {2, 2, 3};
  auto x = randomFloats(6, 5), y = randomFloats(12, 6);
  std::vector<float> c(18), xa(6), yb(12);
  concat(c.data(), {x.data(), y.data()}, {a, b}, 1, 4);
  EXPECT_EQ(c[0], x[0]);
  EXPECT_EQ(c[3], y[0]);
  EXPECT_EQ(c[9], x[3]);
  split({xa.data(), yb.data()}, c.data(), {2, 3, 3}, 1, {1, 2}, 4);
  EXPECT_EQ(xa, x);
  EXPECT_EQ(yb, y);
  std::vector<int64_t> idx = {2, -1, 0};
  std::vector<float> g(2 * 3 * 3);
  ASSERT_TRUE(gather(g.data(), y.data(), {2, 2, 3}, idx.data(), 3, 2, 4));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k) {
        int64_t src = idx[k] < 0 ? idx[k] + 3 : idx[k];
        EXPECT_EQ(g[(i * 2 + j) * 3 + k], y[(i * 2 + j) * 3 + src]);
      }
  idx[0] = 3;
  EXPECT_FALSE(gather(g.data(), y.data(), {2, 2, 3}, idx.data(), 3, 2, 4));
}

TEST(TensorOps, SoftmaxOverAMiddleAxis) {
  Shape s = {2, 5, 3};
  auto x = randomFloats(30, 7);
  std::vector<float> y(30), l(30);
  softmaxF32(y.data(), x.data(), s, 1, false);
  softmaxF32(l.data(), x.data(), s, 1, true);
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < 3; ++i) {
      double z = 0;
      for (int64_t j = 0; j < 5; ++j)
        z += std::exp(double(x[(o * 5 + j) * 3 + i]));
      for (int64_t j = 0; j < 5; ++j) {
        int64_t e = (o * 5 + j) * 3 + i;
        EXPECT_NEAR(y[e], std::exp(x[e]) / z, 1e-6);
        EXPECT_NEAR(l[e], x[e] - std::log(z), 1e-6);
      }
    }
}

TEST(TensorOps, MatmulBroadcastsBatch) {
  Shape a = {2, 1, 3, 4}, b = {3, 4, 5}, out = {2, 3, 3, 5};
  auto x = randomFloats(numElements(a), 8), y = randomFloats(numElements(b), 9);
  std::vector<float> z(numElements(out));
  matmulF32(z.data(), out, x.data(), a, y.data(), b);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t m = 0; m < 3; ++m)
        for (int64_t n = 0; n < 5; ++n) {
          double ref = 0;
          for (int64_t k = 0; k < 4; ++k)
            ref += x[(i * 3 + m) * 4 + k] * y[(j * 4 + k) * 5 + n];
          EXPECT_NEAR(z[((i * 3 + j) * 3 + m) * 5 + n], ref, 1e-5);
        }
}

TEST(TensorOps, DropoutIsSeededAndUnbiased) {
  const int64_t n = 100000;
  std::vector<float> ones(n, 1.0f), a(n), b(n), c(n);
  dropoutF32(a.data(), ones.data(), n, 0.25f, 42);
  dropoutF32(b.data(), ones.data(), n, 0.25f, 42);
  dropoutF32(c.data(), ones.data(), n, 0.25f, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  int64_t dropped = 0;
  for (float v : a) {
    dropped += v == 0.0f;
    EXPECT_TRUE(v == 0.0f || std::fabs(v - 1.0f / 0.75f) < 1e-6f);
  }
  EXPECT_NEAR(double(dropped) / n, 0.25, 0.01);
}

TEST(TensorOps, TriluKeepsTheTriangle) {
  std::vector<float> x(2 * 3 * 4, 1.0f), y(24);
  trilu(y.data(), x.data(), 2, 3, 4, /*upper=*/false, /*k=*/1, 4);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        EXPECT_EQ(y[(b * 3 + i) * 4 + j], j - i <= 1 ? 1.0f : 0.0f);
}
