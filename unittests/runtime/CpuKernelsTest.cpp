//===- CpuKernelsTest.cpp - CPU kernels against references and gradients --===//
//
// Forward kernels are checked against naive references; backward kernels
// against central finite differences of a random projection of the output;
// AdamW against numbers computed by torch.optim.AdamW.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "TensorOpsReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

using namespace frenzy::cpu;

namespace {
std::vector<float> randomVector(int64_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

} // namespace

TEST(CpuKernels, GemmMatchesNaiveForAllTransposes) {
  const int64_t M = 5, N = 7, K = 3;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      auto A = randomVector(M * K, 1), B = randomVector(K * N, 2);
      auto C = randomVector(M * N, 3), ref = C;
      gemm(ta, tb, M, N, K, 0.5f, A.data(), B.data(), 2.0f, C.data());
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k)
            s += A[ta ? k * M + i : i * K + k] * B[tb ? j * K + k : k * N + j];
          EXPECT_NEAR(C[i * N + j], 0.5 * s + 2.0 * ref[i * N + j], 1e-5);
        }
    }
}

TEST(CpuKernels, LayerNormForwardIsNormalised) {
  const int64_t N = 3, C = 16;
  auto x = randomVector(N * C, 4, 3.0f);
  std::vector<float> w(C, 1.0f), b(C, 0.0f), y(N * C), mean(N), rstd(N);
  layerNormForward(y.data(), mean.data(), rstd.data(), x.data(), w.data(),
                   b.data(), N, C, 1e-5f);
  for (int64_t i = 0; i < N; ++i) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < C; ++c)
      m += y[i * C + c];
    for (int64_t c = 0; c < C; ++c)
      v += (y[i * C + c] - m / C) * (y[i * C + c] - m / C);
    EXPECT_NEAR(m / C, 0.0, 1e-5);
    EXPECT_NEAR(v / C, 1.0, 1e-3);
  }
}

TEST(CpuKernels, LayerNormBackwardMatchesFiniteDifferences) {
  const int64_t N = 2, C = 8;
  auto x = randomVector(N * C, 5), w = randomVector(C, 6), b = randomVector(C, 7);
  auto r = randomVector(N * C, 8); // loss = sum(out * r)
  auto loss = [&](const std::vector<float> &xin, const std::vector<float> &win,
                  const std::vector<float> &bin) {
    std::vector<float> y(N * C), mean(N), rstd(N);
    layerNormForward(y.data(), mean.data(), rstd.data(), xin.data(), win.data(),
                     bin.data(), N, C, 1e-5f);
    double s = 0;
    for (int64_t i = 0; i < N * C; ++i)
      s += double(y[i]) * r[i];
    return s;
  };
  std::vector<float> y(N * C), mean(N), rstd(N), dx(N * C), dw(C, 0.0f), db(C, 0.0f);
  layerNormForward(y.data(), mean.data(), rstd.data(), x.data(), w.data(),
                   b.data(), N, C, 1e-5f);
  layerNormBackward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(),
                    mean.data(), rstd.data(), N, C);
  EXPECT_LT(relativeError(dx, numericGradient(x, [&](auto &v) { return loss(v, w, b); }, 1e-2f)), 1e-3);
  EXPECT_LT(relativeError(dw, numericGradient(w, [&](auto &v) { return loss(x, v, b); }, 1e-2f)), 1e-3);
  EXPECT_LT(relativeError(db, numericGradient(b, [&](auto &v) { return loss(x, w, v); }, 1e-2f)), 1e-3);
}

TEST(CpuKernels, GeluTanhBackwardMatchesFiniteDifferences) {
  const int64_t n = 32;
  auto x = randomVector(n, 9, 2.0f), r = randomVector(n, 10);
  std::vector<float> dx(n);
  unaryGradF32(UnaryKind::GeluTanh, dx.data(), r.data(), x.data(), n);
  auto loss = [&](const std::vector<float> &v) {
    std::vector<float> y(n);
    unaryF32(UnaryKind::GeluTanh, y.data(), v.data(), n);
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
      s += double(y[i]) * r[i];
    return s;
  };
  EXPECT_LT(relativeError(dx, numericGradient(x, loss, 1e-3f)), 1e-3);
  std::vector<float> y(1);
  float one = 1.0f;
  unaryF32(UnaryKind::GeluTanh, y.data(), &one, 1);
  EXPECT_NEAR(y[0], 0.841192f, 1e-5); // torch.nn.functional.gelu(1, 'tanh')
}

TEST(CpuKernels, SoftmaxCrossEntropyLossAndGradient) {
  const int64_t N = 4, V = 6;
  auto z = randomVector(N * V, 11, 2.0f);
  std::vector<int64_t> t = {1, 5, -100, 0};
  std::vector<float> dz(N * V);
  float loss = softmaxCrossEntropyLoss(z.data(), t.data(), N, V, -100);
  double ref = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (t[i] == -100)
      continue;
    double s = 0;
    for (int64_t j = 0; j < V; ++j)
      s += std::exp(double(z[i * V + j]));
    ref += std::log(s) - z[i * V + t[i]];
  }
  EXPECT_NEAR(loss, ref / 3, 1e-5); // three rows counted
  softmaxCrossEntropyBackward(dz.data(), z.data(), t.data(), N, V, -100, 1.0f);
  auto f = [&](const std::vector<float> &v) {
    return double(softmaxCrossEntropyLoss(v.data(), t.data(), N, V, -100));
  };
  EXPECT_LT(relativeError(dz, numericGradient(z, f, 1e-2f)), 1e-3);
  for (int64_t j = 0; j < V; ++j)
    EXPECT_EQ(dz[2 * V + j], 0.0f); // the ignored row
}

TEST(CpuKernels, AdamWMatchesTorch) {
  // torch.optim.AdamW(lr=0.1, betas=(0.9, 0.999), eps=1e-8,
  // weight_decay=0.01), two steps from [0.5, -1, 2, 0] with the grads below.
  std::vector<float> p = {0.5f, -1.0f, 2.0f, 0.0f}, m(4, 0.0f), v(4, 0.0f);
  AdamWConfig cfg;
  cfg.lr = 0.1f;
  cfg.weightDecay = 0.01f;
  std::vector<float> g1 = {0.1f, -0.2f, 0.3f, 0.0f}, g2 = {0.05f, 0.4f, -0.3f, 1.0f};
  adamwUpdate(p.data(), g1.data(), m.data(), v.data(), 4, cfg, 1);
  adamwUpdate(p.data(), g2.data(), m.data(), v.data(), 4, cfg, 2);
  std::vector<float> expected = {0.30588254f, -0.93471140f, 1.90136528f, -0.07441368f};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(p[i], expected[i], 2e-6) << i;
}

TEST(CpuKernels, EmbeddingForwardBackward) {
  const int64_t V = 5, C = 3;
  auto table = randomVector(V * C, 12);
  std::vector<int64_t> ids = {4, 0, 4};
  std::vector<float> out(3 * C);
  ASSERT_TRUE(embeddingForward(out.data(), table.data(), ids.data(), 3, V, C));
  for (int64_t c = 0; c < C; ++c)
    EXPECT_EQ(out[c], table[4 * C + c]);
  std::vector<float> dtable(V * C, 0.0f), dout(3 * C, 1.0f);
  embeddingBackward(dtable.data(), dout.data(), ids.data(), 3, C);
  EXPECT_EQ(dtable[4 * C], 2.0f); // id 4 used twice: gradients add
  EXPECT_EQ(dtable[1 * C], 0.0f);
  std::vector<int64_t> bad = {5};
  EXPECT_FALSE(embeddingForward(out.data(), table.data(), bad.data(), 1, V, C));
}

TEST(CpuKernels, CausalAttentionForwardMatchesNaive) {
  const int64_t BH = 2, T = 5, D = 4;
  auto q = randomVector(BH * T * D, 13), k = randomVector(BH * T * D, 14),
       v = randomVector(BH * T * D, 15);
  std::vector<float> out(BH * T * D), probs(BH * T * T);
  AttentionConfig cfg{BH, T, T, D, D, 0.5f, /*causal=*/true};
  attentionForward(out.data(), probs.data(), q.data(), k.data(), v.data(), cfg);
  for (int64_t h = 0; h < BH; ++h)
    for (int64_t i = 0; i < T; ++i) {
      std::vector<double> s(i + 1);
      double maxs = -1e30, sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += q[(h * T + i) * D + d] * k[(h * T + j) * D + d];
        s[j] = 0.5 * dot;
        maxs = std::max(maxs, s[j]);
      }
      for (int64_t j = 0; j <= i; ++j)
        sum += s[j] = std::exp(s[j] - maxs);
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j <= i; ++j)
          o += s[j] / sum * v[(h * T + j) * D + d];
        EXPECT_NEAR(out[(h * T + i) * D + d], o, 1e-5);
      }
    }
}

TEST(CpuKernels, AttentionBackwardMatchesFiniteDifferences) {
  const int64_t BH = 2, T = 4, D = 3;
  auto q = randomVector(BH * T * D, 16), k = randomVector(BH * T * D, 17),
       v = randomVector(BH * T * D, 18), r = randomVector(BH * T * D, 19);
  std::vector<uint8_t> mask(T * T, 0);
  mask[0 * T + 3] = 1; // one masked score besides the causal ones
  AttentionConfig cfg{BH, T, T, D, D, 0.7f, /*causal=*/true, mask.data()};
  cfg.dropout = 0.25f; // the mask must be the same in forward and backward
  cfg.seed = 42;
  std::vector<float> fwdScratch(T * T);
  auto loss = [&](const std::vector<float> &qq, const std::vector<float> &kk,
                  const std::vector<float> &vv) {
    std::vector<float> out(BH * T * D), probs(BH * T * T);
    attentionForward(out.data(), probs.data(), qq.data(), kk.data(), vv.data(),
                     cfg);
    double s = 0;
    for (size_t i = 0; i < out.size(); ++i)
      s += double(out[i]) * r[i];
    return s;
  };
  std::vector<float> out(BH * T * D), probs(BH * T * T), dq(q.size()),
      dk(k.size()), dv(v.size());
  attentionForward(out.data(), probs.data(), q.data(), k.data(), v.data(), cfg);
  attentionBackward(dq.data(), dk.data(), dv.data(), r.data(), probs.data(),
                    q.data(), k.data(), v.data(), cfg);
  EXPECT_LT(relativeError(dq, numericGradient(q, [&](auto &x) { return loss(x, k, v); }, 1e-3f)), 2e-3);
  EXPECT_LT(relativeError(dk, numericGradient(k, [&](auto &x) { return loss(q, x, v); }, 1e-3f)), 2e-3);
  EXPECT_LT(relativeError(dv, numericGradient(v, [&](auto &x) { return loss(q, k, x); }, 1e-3f)), 2e-3);
}
