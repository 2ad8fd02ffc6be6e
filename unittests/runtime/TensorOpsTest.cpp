//===- TensorOpsTest.cpp - elementwise and reduction kernels vs references -===//
//
// The elementwise, masking, cast and reduction kernels of
// runtime/cpu/TensorOps.h against direct, index-by-index references
// (TensorOpsReference.h), on shapes that exercise broadcasting on both sides,
// rank-0 operands and odd sizes; activation gradients against central finite
// differences.
//
//===----------------------------------------------------------------------===//
#include "TensorOpsReference.h"


TEST(TensorOps, NumElements) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({3, 0, 2}), 0);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
}

TEST(TensorOps, UnaryMatchesFormulas) {
  using U = UnaryKind;
  const std::vector<std::pair<U, std::function<double(double)>>> cases = {
      {U::Neg, [](double x) { return -x; }},
      {U::Abs, [](double x) { return std::fabs(x); }},
      {U::Exp, [](double x) { return std::exp(x); }},
      {U::Log, [](double x) { return std::log(x); }},
      {U::Sqrt, [](double x) { return std::sqrt(x); }},
      {U::Reciprocal, [](double x) { return 1 / x; }},
      {U::Tanh, [](double x) { return std::tanh(x); }},
      {U::Erf, [](double x) { return std::erf(x); }},
      {U::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {U::Relu, [](double x) { return x > 0 ? x : 0; }},
      {U::Sin, [](double x) { return std::sin(x); }},
      {U::Cos, [](double x) { return std::cos(x); }},
      {U::Silu, [](double x) { return x / (1 + std::exp(-x)); }},
      {U::GeluTanh,
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       }},
      {U::GeluErf,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }}};
  auto x = randomFloats(257, 1, -4.0f, 4.0f);
  auto pos = randomFloats(257, 2, 0.05f, 4.0f); // domain of log, sqrt, 1/x
  std::vector<float> y(257);
  for (auto &[kind, ref] : cases) {
    bool positive = kind == U::Log || kind == U::Sqrt || kind == U::Reciprocal;
    const auto &in = positive ? pos : x;
    unaryF32(kind, y.data(), in.data(), 257);
    for (size_t i = 0; i < in.size(); ++i) {
      double r = ref(in[i]);
      EXPECT_NEAR(y[i], r, 2e-6 * std::max(1.0, std::fabs(r)))
          << "kind " << int(kind) << " x=" << in[i];
    }
  }
}

TEST(TensorOps, UnaryGradMatchesFiniteDifferences) {
  auto x = randomFloats(64, 3, -4.0f, 4.0f), dout = randomFloats(64, 4);
  for (UnaryKind k : {UnaryKind::Silu, UnaryKind::GeluTanh, UnaryKind::GeluErf}) {
    std::vector<float> din(64), y(64);
    unaryGradF32(k, din.data(), dout.data(), x.data(), 64);
    auto num = numericGradient(x, [&](const std::vector<float> &v) {
      unaryF32(k, y.data(), v.data(), 64);
      return dot(dout, y);
    });
    EXPECT_LT(relativeError(din, num), 1e-3) << "kind " << int(k);
    for (size_t i = 0; i < 64; ++i)
      EXPECT_NEAR(din[i], num[i], 2e-3) << "kind " << int(k) << " i=" << i;
  }
}

TEST(TensorOps, BinaryF32BroadcastsBothSides) {
  using B = BinaryKind;
  for (auto &[as, bs] : kBroadcastPairs) {
    Shape out = broadcastShape(as, bs);
    auto a = randomFloats(numElements(as), 5, 0.1f, 2.0f);
    auto b = randomFloats(numElements(bs), 6, -2.0f, 2.0f);
    std::vector<float> z(numElements(out));
    for (B k : {B::Add, B::Sub, B::Mul, B::Div, B::Pow, B::Max, B::Min}) {
      binaryF32(k, z.data(), out, a.data(), as, b.data(), bs);
      for (int64_t i = 0; i < numElements(out); ++i) {
        auto idx = unravel(i, out);
        float x = a[broadcastOffset(idx, as)], y = b[broadcastOffset(idx, bs)];
        float r = k == B::Add ? x + y : k == B::Sub ? x - y : k == B::Mul ? x * y
                  : k == B::Div ? x / y : k == B::Pow ? std::pow(x, y)
                  : k == B::Max ? std::max(x, y) : std::min(x, y);
        ASSERT_FLOAT_EQ(z[i], r) << "kind " << int(k) << " at " << i;
      }
    }
  }
}

TEST(TensorOps, BinaryI64) {
  using B = BinaryKind;
  Shape as = {2, 3}, bs = {3}, out = {2, 3};
  std::vector<int64_t> a = {7, -7, 9, 2, 3, -4}, b = {2, 3, 0}, z(6);
  binaryI64(B::Div, z.data(), out, a.data(), as, b.data(), bs);
  EXPECT_EQ(z, (std::vector<int64_t>{3, -2, 0, 1, 1, 0})); // trunc; /0 -> 0
  binaryI64(B::Pow, z.data(), out, a.data(), as, b.data(), bs);
  EXPECT_EQ(z, (std::vector<int64_t>{49, -343, 1, 4, 27, 1}));
  auto x = randomInts(24, 7, -50, 50), y = randomInts(4, 8, -50, 50);
  std::vector<int64_t> w(24);
  for (B k : {B::Add, B::Sub, B::Mul, B::Max, B::Min}) {
    binaryI64(k, w.data(), {2, 3, 4}, x.data(), {2, 3, 4}, y.data(), {4});
    for (int64_t i = 0; i < 24; ++i) {
      int64_t p = x[i], q = y[i % 4];
      EXPECT_EQ(w[i], k == B::Add ? p + q : k == B::Sub ? p - q
                      : k == B::Mul ? p * q : k == B::Max ? std::max(p, q)
                                                          : std::min(p, q));
    }
  }
}

TEST(TensorOps, CompareLogicNot) {
  using C = CompareKind;
  for (auto &[as, bs] : kBroadcastPairs) {
    Shape out = broadcastShape(as, bs);
    // Few distinct values so that ties (Equal, LessEqual) really occur.
    auto a = randomInts(numElements(as), 9, 0, 2), b = randomInts(numElements(bs), 10, 0, 2);
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<uint8_t> m(numElements(out)), mf(m.size());
    for (C k : {C::Equal, C::Less, C::LessEqual, C::Greater, C::GreaterEqual}) {
      compareI64(k, m.data(), out, a.data(), as, b.data(), bs);
      compareF32(k, mf.data(), out, af.data(), as, bf.data(), bs);
      for (int64_t i = 0; i < numElements(out); ++i) {
        auto idx = unravel(i, out);
        int64_t x = a[broadcastOffset(idx, as)], y = b[broadcastOffset(idx, bs)];
        bool r = k == C::Equal ? x == y : k == C::Less ? x < y
                 : k == C::LessEqual ? x <= y : k == C::Greater ? x > y : x >= y;
        ASSERT_EQ(m[i], uint8_t(r));
        ASSERT_EQ(mf[i], uint8_t(r));
      }
    }
  }
  std::vector<uint8_t> p = {0, 2, 1, 0, 1, 1}, q = {1, 0, 3}, r(6);
  logicU8(LogicKind::And, r.data(), {2, 3}, p.data(), {2, 3}, q.data(), {3});
  EXPECT_EQ(r, (std::vector<uint8_t>{0, 0, 1, 0, 0, 1}));
  logicU8(LogicKind::Or, r.data(), {2, 3}, p.data(), {2, 3}, q.data(), {3});
  EXPECT_EQ(r, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1}));
  notU8(r.data(), p.data(), 6);
  EXPECT_EQ(r, (std::vector<uint8_t>{1, 0, 0, 1, 0, 0}));
}

TEST(TensorOps, WhereBroadcastsThreeWays) {
  Shape cs = {2, 1, 4}, as = {3, 1}, bs = {}, out = {2, 3, 4};
  auto c = randomInts(numElements(cs), 11, 0, 1);
  std::vector<uint8_t> cond(c.begin(), c.end());
  for (int eb : {1, 4, 8}) {
    std::vector<uint8_t> a(numElements(as) * eb), b(eb), z(numElements(out) * eb);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = uint8_t(i + 1);
    std::fill(b.begin(), b.end(), uint8_t(0xEE));
    where(z.data(), out, cond.data(), cs, a.data(), as, b.data(), bs, eb);
    for (int64_t i = 0; i < numElements(out); ++i) {
      auto idx = unravel(i, out);
      const uint8_t *src = cond[broadcastOffset(idx, cs)]
                               ? &a[broadcastOffset(idx, as) * eb] : b.data();
      ASSERT_EQ(std::memcmp(&z[i * eb], src, eb), 0) << "eb " << eb << " i " << i;
    }
  }
}

TEST(TensorOps, Cast) {
  std::vector<float> f = {-1.7f, 0.0f, 2.9f, -0.2f};
  std::vector<int64_t> i(4);
  cast(i.data(), DType::I64, f.data(), DType::F32, 4);
  EXPECT_EQ(i, (std::vector<int64_t>{-1, 0, 2, 0})); // toward zero
  std::vector<int32_t> i32(4);
  cast(i32.data(), DType::I32, i.data(), DType::I64, 4);
  EXPECT_EQ(i32, (std::vector<int32_t>{-1, 0, 2, 0}));
  std::vector<uint8_t> bits(4);
  cast(bits.data(), DType::Bool, f.data(), DType::F32, 4);
  EXPECT_EQ(bits, (std::vector<uint8_t>{1, 0, 1, 1}));
  std::vector<float> back(4);
  cast(back.data(), DType::F32, bits.data(), DType::Bool, 4);
  EXPECT_EQ(back, (std::vector<float>{1, 0, 1, 1}));
  cast(back.data(), DType::F32, i32.data(), DType::I32, 4);
  EXPECT_EQ(back, (std::vector<float>{-1, 0, 2, 0}));
  std::vector<int64_t> same(4);
  cast(same.data(), DType::I64, i.data(), DType::I64, 4);
  EXPECT_EQ(same, i);
}

TEST(TensorOps, TriluKeepsTheTriangle) {
  const int64_t B = 2, R = 3, C = 5;
  auto x = randomInts(B * R * C, 12, 1, 100);
  std::vector<int64_t> y(x.size());
  for (bool upper : {false, true})
    for (int64_t k : {-4, -1, 0, 1, 2, 7}) {
      trilu(y.data(), x.data(), B, R, C, upper, k, 8);
      for (int64_t e = 0; e < B * R * C; ++e) {
        int64_t i = e / C % R, j = e % C;
        bool keep = upper ? j - i >= k : j - i <= k;
        ASSERT_EQ(y[e], keep ? x[e] : 0) << upper << " k=" << k << " e=" << e;
      }
    }
}

TEST(TensorOps, ReduceEveryAxisSet) {
  Shape s = {2, 3, 1, 4};
  auto x = randomFloats(numElements(s), 13);
  for (unsigned mask = 0; mask < 16; ++mask) {
    std::vector<int64_t> axes;
    Shape keep = s;
    for (int64_t d = 0; d < 4; ++d)
      if (mask >> d & 1) {
        axes.push_back(d);
        keep[d] = 1;
      }
    for (ReduceKind k : {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max,
                         ReduceKind::Min}) {
      std::vector<double> ref(numElements(keep), k == ReduceKind::Max ? -1e30
                                                 : k == ReduceKind::Min ? 1e30 : 0);
      for (int64_t i = 0; i < numElements(s); ++i) {
        double &r = ref[broadcastOffset(unravel(i, s), keep)];
        r = k == ReduceKind::Max ? std::max(r, double(x[i]))
            : k == ReduceKind::Min ? std::min(r, double(x[i])) : r + x[i];
      }
      std::vector<float> out(ref.size()), again(ref.size());
      reduceF32(k, out.data(), x.data(), s, axes);
      reduceF32(k, again.data(), x.data(), s, axes);
      EXPECT_EQ(std::memcmp(out.data(), again.data(), out.size() * 4), 0);
      double count = double(numElements(s)) / double(ref.size());
      for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(out[i], k == ReduceKind::Mean ? ref[i] / count : ref[i], 1e-6)
            << "mask " << mask << " kind " << int(k);
    }
  }
}

TEST(TensorOps, SumToShapeIsTheAdjointOfExpand) {
  Shape in = {2, 3, 4, 5};
  auto x = randomFloats(numElements(in), 14), w = randomFloats(numElements(in), 15);
  for (Shape out : std::vector<Shape>{{}, {1}, {5}, {4, 1}, {3, 1, 5}, {2, 1, 1, 5},
                                      {1, 1, 1, 1}, {2, 3, 4, 5}}) {
    std::vector<float> s(numElements(out)), e(numElements(in));
    auto v = randomFloats(numElements(out), 16);
    sumToShapeF32(s.data(), out, x.data(), in);
    std::vector<double> ref(s.size(), 0.0);
    for (int64_t i = 0; i < numElements(in); ++i)
      ref[broadcastOffset(unravel(i, in), out)] += x[i];
    for (size_t i = 0; i < s.size(); ++i)
      ASSERT_NEAR(s[i], ref[i], 1e-5);
    // <expand(v), x> == <v, sumToShape(x)>
    expand(e.data(), in, v.data(), out, 4);
    for (int64_t i = 0; i < numElements(in); ++i)
      ASSERT_EQ(e[i], v[broadcastOffset(unravel(i, in), out)]);
    EXPECT_NEAR(dot(e, x), dot(v, s), 1e-4);
  }
}
