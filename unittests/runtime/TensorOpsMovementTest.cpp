//===- TensorOpsMovementTest.cpp - movement, softmax, norm, dropout, matmul -===//
//
// The data-movement, softmax, RMS norm, dropout and matmul kernels of
// runtime/cpu/TensorOps.h against direct, index-by-index references
// (TensorOpsReference.h): every transpose permutation, negative steps and
// indices, round trips, finite-difference gradients, dropout statistics.
//
//===----------------------------------------------------------------------===//
#include "TensorOpsReference.h"

TEST(TensorOps, TransposeEveryPermutation) {
  Shape s = {2, 3, 4, 5};
  auto x = randomInts(numElements(s), 17, -1000, 1000);
  std::vector<int64_t> perm = {0, 1, 2, 3}, y(x.size());
  do {
    transpose(y.data(), x.data(), s, perm, 8);
    Shape os(4);
    for (int d = 0; d < 4; ++d)
      os[d] = s[perm[d]];
    for (int64_t i = 0; i < numElements(os); ++i) {
      auto o = unravel(i, os);
      std::vector<int64_t> src(4);
      for (int d = 0; d < 4; ++d)
        src[perm[d]] = o[d];
      ASSERT_EQ(y[i], x[ravel(src, s)]);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  std::vector<uint8_t> b = {1, 2, 3, 4, 5, 6}, bt(6); // one-byte elements
  transpose(bt.data(), b.data(), {2, 3}, {1, 0}, 1);
  EXPECT_EQ(bt, (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorOps, SliceAndItsGradient) {
  Shape s = {4, 5, 6};
  auto x = randomFloats(numElements(s), 18);
  struct Case { std::vector<int64_t> starts, limits, steps; };
  for (const Case &c : std::vector<Case>{
           {{0, 0, 0}, {4, 5, 6}, {1, 1, 1}},  {{1, 0, 0}, {3, 5, 6}, {1, 1, 1}},
           {{0, 1, 2}, {4, 4, 5}, {2, 1, 1}},  {{3, 4, 5}, {-1, -1, -1}, {-1, -2, -3}},
           {{1, 2, 0}, {2, -1, 6}, {1, -2, 2}}, {{2, 0, 0}, {2, 5, 6}, {1, 1, 1}}}) {
    Shape os(3);
    for (int d = 0; d < 3; ++d) {
      int64_t st = c.steps[d], span = st > 0 ? c.limits[d] - c.starts[d]
                                             : c.starts[d] - c.limits[d];
      os[d] = std::max<int64_t>(0, (span + std::abs(st) - 1) / std::abs(st));
    }
    std::vector<float> y(numElements(os)), dx(x.size());
    auto dy = randomFloats(y.size(), 19);
    slice(y.data(), x.data(), s, c.starts, c.limits, c.steps, 4);
    sliceGradF32(dx.data(), s, dy.data(), c.starts, c.limits, c.steps);
    std::vector<float> ref(x.size(), 0.0f);
    for (int64_t i = 0; i < numElements(os); ++i) {
      auto o = unravel(i, os);
      for (int d = 0; d < 3; ++d)
        o[d] = c.starts[d] + o[d] * c.steps[d];
      ASSERT_EQ(y[i], x[ravel(o, s)]);
      ref[ravel(o, s)] = dy[i];
    }
    EXPECT_EQ(dx, ref);
  }
}

TEST(TensorOps, ConcatSplitRoundTrip) {
  for (int64_t axis = 0; axis < 3; ++axis) {
    std::vector<Shape> shapes = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}};
    shapes[1][axis] = 1;
    shapes[2][axis] = 0; // an empty piece
    Shape out = shapes[0];
    out[axis] = shapes[0][axis] + 1 + 0;
    std::vector<std::vector<float>> in;
    for (unsigned k = 0; k < 3; ++k)
      in.push_back(randomFloats(numElements(shapes[k]), 20 + k));
    std::vector<float> c(numElements(out));
    concat(c.data(), {in[0].data(), in[1].data(), in[2].data()}, shapes, axis, 4);
    for (int64_t i = 0; i < numElements(out); ++i) {
      auto idx = unravel(i, out);
      int64_t k = idx[axis] < shapes[0][axis] ? 0 : 1;
      idx[axis] -= k ? shapes[0][axis] : 0;
      ASSERT_EQ(c[i], in[k][ravel(idx, shapes[k])]);
    }
    std::vector<std::vector<float>> parts;
    for (auto &sh : shapes)
      parts.emplace_back(numElements(sh));
    split({parts[0].data(), parts[1].data(), parts[2].data()}, c.data(), out,
          axis, {shapes[0][axis], shapes[1][axis], shapes[2][axis]}, 4);
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(parts[k], in[k]) << "axis " << axis << " part " << k;
  }
}

TEST(TensorOps, GatherAndScatterAddGradient) {
  Shape s = {3, 4, 5};
  auto x = randomFloats(numElements(s), 23);
  for (int64_t axis = 0; axis < 3; ++axis) {
    const int64_t n = s[axis];
    std::vector<int64_t> idx = {n - 1, -1, 0, -n, 1, 1}; // negatives, repeats
    Shape os = s;
    os[axis] = int64_t(idx.size());
    std::vector<float> y(numElements(os)), dx(x.size());
    ASSERT_TRUE(gather(y.data(), x.data(), s, idx.data(), 6, axis, 4));
    auto dy = randomFloats(y.size(), 24);
    gatherGradF32(dx.data(), s, dy.data(), idx.data(), 6, axis);
    std::vector<double> ref(x.size(), 0.0);
    for (int64_t i = 0; i < numElements(os); ++i) {
      auto o = unravel(i, os);
      int64_t j = idx[o[axis]];
      o[axis] = j < 0 ? j + n : j;
      ASSERT_EQ(y[i], x[ravel(o, s)]);
      ref[ravel(o, s)] += dy[i];
    }
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(dx[i], ref[i], 1e-6);
    for (int64_t bad : {n, -n - 1}) {
      std::vector<int64_t> b = {0, bad};
      EXPECT_FALSE(gather(y.data(), x.data(), s, b.data(), 2, axis, 4));
    }
  }
}

TEST(TensorOps, SoftmaxEveryAxisAndInPlace) {
  Shape s = {3, 4, 5};
  // exp overflows float beyond 88: only a max-shifted softmax survives.
  auto x = randomFloats(numElements(s), 25, -150.0f, 150.0f);
  for (int64_t axis = 0; axis < 3; ++axis)
    for (bool log : {false, true}) {
      std::vector<float> y(x.size()), inPlace = x;
      softmaxF32(y.data(), x.data(), s, axis, log);
      softmaxF32(inPlace.data(), inPlace.data(), s, axis, log);
      EXPECT_EQ(y, inPlace);
      for (int64_t i = 0; i < numElements(s); ++i) {
        auto idx = unravel(i, s);
        double mx = -1e30, z = 0;
        for (idx[axis] = 0; idx[axis] < s[axis]; ++idx[axis])
          mx = std::max(mx, double(x[ravel(idx, s)]));
        for (idx[axis] = 0; idx[axis] < s[axis]; ++idx[axis])
          z += std::exp(double(x[ravel(idx, s)]) - mx);
        double ref = double(x[i]) - mx - std::log(z);
        ASSERT_NEAR(y[i], log ? ref : std::exp(ref), 1e-6 * std::max(1.0, std::fabs(ref)))
            << "axis " << axis << " log " << log;
      }
    }
}

TEST(TensorOps, SoftmaxGradMatchesFiniteDifferences) {
  Shape s = {2, 3, 4};
  auto x = randomFloats(24, 26, -2.0f, 2.0f), w = randomFloats(24, 27);
  for (int64_t axis = 0; axis < 3; ++axis)
    for (bool log : {false, true}) {
      std::vector<float> y(24), din(24);
      softmaxF32(y.data(), x.data(), s, axis, log);
      softmaxGradF32(din.data(), w.data(), y.data(), s, axis, log);
      auto num = numericGradient(x, [&](const std::vector<float> &v) {
        std::vector<float> t(24);
        softmaxF32(t.data(), v.data(), s, axis, log);
        return dot(w, t);
      });
      EXPECT_LT(relativeError(din, num), 1e-2) << "axis " << axis << " log " << log;
    }
}

TEST(TensorOps, RMSNormForwardAndBackward) {
  const int64_t N = 3, C = 7;
  const float eps = 1e-5f;
  auto x = randomFloats(N * C, 28), scale = randomFloats(C, 29, 0.5f, 1.5f);
  auto w = randomFloats(N * C, 30);
  std::vector<float> y(N * C);
  rmsNormForward(y.data(), x.data(), scale.data(), N, C, eps);
  for (int64_t n = 0; n < N; ++n) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c)
      ms += double(x[n * C + c]) * x[n * C + c] / C;
    for (int64_t c = 0; c < C; ++c)
      ASSERT_NEAR(y[n * C + c], x[n * C + c] / std::sqrt(ms + eps) * scale[c], 1e-5);
  }
  auto loss = [&](const std::vector<float> &xv, const std::vector<float> &sv) {
    std::vector<float> t(N * C);
    rmsNormForward(t.data(), xv.data(), sv.data(), N, C, eps);
    return dot(w, t);
  };
  std::vector<float> dx(N * C), dscale(C, 0.25f); // dscale accumulates
  rmsNormBackward(dx.data(), dscale.data(), w.data(), x.data(), scale.data(), N,
                  C, eps);
  auto numX = numericGradient(x, [&](const std::vector<float> &v) { return loss(v, scale); });
  auto numS = numericGradient(scale, [&](const std::vector<float> &v) { return loss(x, v); });
  for (double &g : numS)
    g += 0.25;
  EXPECT_LT(relativeError(dx, numX), 1e-2);
  EXPECT_LT(relativeError(dscale, numS), 1e-2);
}

TEST(TensorOps, DropoutIsSeededUnbiasedAndScaled) {
  const int64_t n = 100000;
  auto in = randomFloats(n, 31);
  for (float ratio : {0.1f, 0.5f, 0.9f}) {
    std::vector<float> a(n), b(n), c(n);
    dropoutF32(a.data(), in.data(), n, ratio, 42);
    dropoutF32(b.data(), in.data(), n, ratio, 42);
    dropoutF32(c.data(), in.data(), n, ratio, 43);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    int64_t dropped = 0, bothDropped = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool drop = dropoutUniform(42, uint64_t(i)) < ratio; // the shared mask
      dropped += drop;
      bothDropped += drop && i > 0 && a[i - 1] == 0.0f;
      ASSERT_EQ(a[i], drop ? 0.0f : in[i] * (1.0f / (1.0f - ratio)));
    }
    EXPECT_NEAR(double(dropped) / n, ratio, 0.02);
    // Neighbours decide independently (a weak hash would correlate them).
    EXPECT_NEAR(double(bothDropped) / n, ratio * ratio, 0.02);
  }
  std::vector<float> copy(n);
  dropoutF32(copy.data(), in.data(), n, 0.0f, 42);
  EXPECT_EQ(copy, in);
  double mean = 0;
  for (uint64_t i = 0; i < 10000; ++i) {
    float u = dropoutUniform(7, i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ASSERT_EQ(u, dropoutUniform(7, i));
    mean += u / 10000;
  }
  EXPECT_NEAR(mean, 0.5, 0.01);
}

TEST(TensorOps, MatmulBroadcastsBatchAndPromotesVectors) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 1, 3, 4}, {3, 4, 5}}, {{5, 3, 4}, {4, 2}}, {{3, 4}, {2, 4, 5}},
      {{1, 3, 4}, {2, 1, 4, 5}}, {{4}, {2, 4, 3}},   {{2, 3, 4}, {4}},
      {{4}, {4}},                {{3, 4}, {4, 6}},    {{2, 3, 0}, {0, 5}}};
  for (auto &[as, bs] : cases) {
    // Reference on the numpy-promoted shapes; dropped dims keep the layout.
    Shape pa = as, pb = bs;
    if (pa.size() == 1)
      pa.insert(pa.begin(), 1);
    if (pb.size() == 1)
      pb.push_back(1);
    int64_t M = pa[pa.size() - 2], K = pa.back(), N = pb.back();
    Shape batch = broadcastShape(Shape(pa.begin(), pa.end() - 2),
                                 Shape(pb.begin(), pb.end() - 2));
    Shape out = batch;
    if (as.size() > 1)
      out.push_back(M);
    if (bs.size() > 1)
      out.push_back(N);
    auto a = randomFloats(numElements(as), 32), b = randomFloats(numElements(bs), 33);
    std::vector<float> z(numElements(out), 99.0f);
    matmulF32(z.data(), out, a.data(), as, b.data(), bs);
    Shape aB(pa.begin(), pa.end() - 2), bB(pb.begin(), pb.end() - 2);
    for (int64_t i = 0; i < numElements(batch); ++i) {
      auto idx = unravel(i, batch);
      const float *am = a.data() + broadcastOffset(idx, aB) * M * K;
      const float *bm = b.data() + broadcastOffset(idx, bB) * K * N;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t nn = 0; nn < N; ++nn) {
          double ref = 0;
          for (int64_t k = 0; k < K; ++k)
            ref += double(am[m * K + k]) * bm[k * N + nn];
          ASSERT_NEAR(z[(i * M + m) * N + nn], ref, 1e-5);
        }
    }
  }
}
