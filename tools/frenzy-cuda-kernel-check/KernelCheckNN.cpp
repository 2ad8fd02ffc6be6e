//===- KernelCheckNN.cpp - norms, loss, embedding, attention, optimizer ---===//
#include "CheckHarness.h"
#include "Kernels.h"
#include "TensorOps.h"

#include <cmath>
#include <random>

namespace frenzy::kcheck {

namespace ck = cuda::kernels;

namespace {
constexpr FloatType F32 = FloatType::F32, BF16 = FloatType::BF16;

/// A device scratch buffer of `bytes` bytes.
struct Workspace {
  explicit Workspace(size_t bytes) : buf((bytes + 7) / 8, 8) {}
  void *get() const { return buf.get(); }
  DevBuf buf;
};

void layerNormCase(FloatType t, int64_t N, int64_t C, bool withBias) {
  const float eps = 1e-5f;
  // A mean far from 0 against the spread: the two-pass variance matters.
  Floats x = rounded(uniform(N * C, 100, 2.0f, 4.0f), t);
  Floats w = uniform(C, 101, 0.5f, 1.5f), b = uniform(C, 102);
  DevFloats dx(t, x), dw(F32, w), db(F32, b), dy(t, size_t(N * C));
  DevFloats dmean(F32, size_t(N)), drstd(F32, size_t(N));
  const std::string sh = shapeStr({N, C});
  if (!ok(ck::layerNormForward(env().stream, t, dy.get(), dmean.f32(),
                               drstd.f32(), dx.get(), dw.f32(),
                               withBias ? db.f32() : nullptr, N, C, eps),
          "layer_norm"))
    return;
  Floats ref(N * C), mean(N), rstd(N);
  cpu::layerNormForward(ref.data(), mean.data(), rstd.data(), x.data(),
                        w.data(), withBias ? b.data() : nullptr, N, C, eps);
  check(withBias ? "layer_norm" : "layer_norm (no bias)", t, sh, dy.read(),
        rounded(ref, t));
  if (t == F32)
    check("layer_norm rstd", t, sh, drstd.read(), rstd);
  // Backward: dweight/dbias accumulate onto existing values.
  Floats g = rounded(uniform(N * C, 103), t);
  Floats dw0 = uniform(C, 104), db0 = uniform(C, 105);
  DevFloats dg(t, g), ddx(t, size_t(N * C)), ddw(F32, dw0), ddb(F32, db0);
  Workspace ws(ck::layerNormBackwardWorkspaceBytes(N, C));
  if (!ok(ck::layerNormBackward(env().stream, t, ddx.get(), ddw.f32(),
                                ddb.f32(), dg.get(), dx.get(), dw.f32(), N, C,
                                eps, ws.get()),
          "layer_norm_grad"))
    return;
  Floats rdx(N * C), rdw = dw0, rdb = db0;
  cpu::layerNormBackward(rdx.data(), rdw.data(), rdb.data(), g.data(),
                         x.data(), w.data(), mean.data(), rstd.data(), N, C);
  check("layer_norm_grad dx", t, sh, ddx.read(), rounded(rdx, t));
  check("layer_norm_grad dweight (+=)", t, sh, ddw.read(), rdw);
  check("layer_norm_grad dbias (+=)", t, sh, ddb.read(), rdb);
}

void rmsNormCase(FloatType t, int64_t N, int64_t C) {
  const float eps = 1e-6f;
  Floats x = rounded(uniform(N * C, 110), t), w = uniform(C, 111, 0.5f, 1.5f);
  DevFloats dx(t, x), dw(F32, w), dy(t, size_t(N * C));
  const std::string sh = shapeStr({N, C});
  if (!ok(ck::rmsNormForward(env().stream, t, dy.get(), dx.get(), dw.f32(), N,
                             C, eps),
          "rms_norm"))
    return;
  Floats ref(N * C);
  cpu::rmsNormForward(ref.data(), x.data(), w.data(), N, C, eps);
  check("rms_norm", t, sh, dy.read(), rounded(ref, t));
  Floats g = rounded(uniform(N * C, 112), t), ds0 = uniform(C, 113);
  DevFloats dg(t, g), ddx(t, size_t(N * C)), dds(F32, ds0);
  Workspace ws(ck::rmsNormBackwardWorkspaceBytes(N, C));
  if (!ok(ck::rmsNormBackward(env().stream, t, ddx.get(), dds.f32(), dg.get(),
                              dx.get(), dw.f32(), N, C, eps, ws.get()),
          "rms_norm_grad"))
    return;
  Floats rdx(N * C), rds = ds0;
  cpu::rmsNormBackward(rdx.data(), rds.data(), g.data(), x.data(), w.data(), N,
                       C, eps);
  check("rms_norm_grad dx", t, sh, ddx.read(), rounded(rdx, t));
  check("rms_norm_grad dscale (+=)", t, sh, dds.read(), rds);
}

void softmaxCase(FloatType t, const cpu::Shape &s, int64_t axis, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
  const int64_t n = cpu::numElements(s);
  Floats x = rounded(uniform(n, 120, -6, 6), t);
  DevFloats dx(t, x), dy(t, size_t(n));
  std::string name = std::string(log ? "log_softmax" : "softmax") + " axis " +
                     std::to_string(axis);
  if (!ok(ck::softmax(env().stream, t, dy.get(), dx.get(), outer, s[axis],
                      inner, log),
          name))
    return;
  Floats ref(n);
  cpu::softmaxF32(ref.data(), x.data(), s, axis, log);
  Floats got = dy.read();
  check(name, t, shapeStr(s), got, rounded(ref, t));
  // Backward from the forward output (the CPU's y); dout random.
  Floats y = rounded(ref, t), g = rounded(uniform(n, 121), t);
  DevFloats ddy(t, g), dyv(t, y), ddx(t, size_t(n));
  if (!ok(ck::softmaxGrad(env().stream, t, ddx.get(), ddy.get(), dyv.get(),
                          outer, s[axis], inner, log),
          "softmax_grad"))
    return;
  Floats rg(n);
  cpu::softmaxGradF32(rg.data(), g.data(), y.data(), s, axis, log);
  check(std::string("softmax_grad") + (log ? " (log)" : "") + " axis " +
            std::to_string(axis),
        t, shapeStr(s), ddx.read(), rounded(rg, t));
}

void crossEntropyCase(FloatType t, int64_t N, int64_t V, bool sum) {
  Floats z = rounded(uniform(N * V, 130, -8, 8), t);
  std::vector<int64_t> y(N);
  std::mt19937 gen(131);
  for (int64_t i = 0; i < N; ++i)
    y[i] = i % 5 == 4 ? -100 : int64_t(gen() % V); // some ignored rows
  DevFloats dz(t, z), dd(t, size_t(N * V)), dloss(F32, Floats{1.0f}),
      up(F32, Floats{0.75f});
  DevBuf dy(N, 8), bad(1, 8);
  toDevice(dy, y);
  toDevice(bad, std::vector<int64_t>{-1});
  Workspace ws(ck::crossEntropyWorkspaceBytes(N));
  const std::string sh = shapeStr({N, V});
  const std::string name = std::string("cross_entropy") + (sum ? " sum" : " mean");
  if (!ok(ck::crossEntropy(env().stream, t, dloss.f32(), dd.get(), dz.get(),
                           dy.as<int64_t>(), N, V, -100, sum, up.f32(),
                           bad.as<int64_t>(), ws.get()),
          name))
    return;
  int64_t counted = 0;
  for (int64_t v : y)
    counted += v != -100;
  float refLoss = cpu::softmaxCrossEntropyLoss(z.data(), y.data(), N, V, -100);
  if (sum)
    refLoss *= float(counted);
  check(name + " loss", t, sh, dloss.read(), Floats{refLoss}, kTolF32);
  Floats rd(N * V);
  cpu::softmaxCrossEntropyBackward(rd.data(), z.data(), y.data(), N, V, -100,
                                   0.75f * (sum ? float(counted) : 1.0f));
  check(name + " fused grad", t, sh, dd.read(), rounded(rd, t));
  checkExact(name + " labels in range", sh, fromDevice<int64_t>(bad, 1)[0] == -1,
             "");
}

void embeddingCase(FloatType t, int64_t N, int64_t V, int64_t C) {
  Floats table = uniform(V * C, 140);
  std::vector<int64_t> ids(N);
  std::mt19937 gen(141);
  for (int64_t i = 0; i < N; ++i)
    ids[i] = int64_t(gen() % (V / 4)); // many repeats
  DevFloats dt(F32, table), dout(t, size_t(N * C));
  DevBuf di(N, 8), bad(1, 8);
  toDevice(di, ids);
  toDevice(bad, std::vector<int64_t>{-1});
  const std::string sh = shapeStr({N, V, C});
  if (!ok(ck::embeddingForward(env().stream, t, dout.get(), dt.f32(),
                               di.as<int64_t>(), N, V, C, bad.as<int64_t>()),
          "embedding"))
    return;
  Floats ref(N * C);
  cpu::embeddingForward(ref.data(), table.data(), ids.data(), N, V, C);
  check("embedding", t, sh, dout.read(), rounded(ref, t), 0.0);
  Floats g = rounded(uniform(N * C, 142), t), d0 = uniform(V * C, 143);
  DevFloats dg(t, g), dtab(F32, d0);
  if (!ok(ck::embeddingBackward(env().stream, t, dtab.f32(), dg.get(),
                                di.as<int64_t>(), N, V, C),
          "embedding_grad"))
    return;
  Floats rd = d0;
  cpu::embeddingBackward(rd.data(), g.data(), ids.data(), N, C);
  // Same order of the same float adds: bit-identical is expected.
  check("embedding_grad (+=, repeats)", t, sh, dtab.read(), rd, 0.0);
  ids[N / 2] = V; // a token id beyond the vocabulary
  toDevice(di, ids);
  if (ok(ck::embeddingForward(env().stream, t, dout.get(), dt.f32(),
                              di.as<int64_t>(), N, V, C, bad.as<int64_t>()),
         "embedding")) {
    int64_t first = fromDevice<int64_t>(bad, 1)[0];
    checkExact("embedding bad id reported", sh, first == N / 2,
               "position " + std::to_string(first));
  }
}

struct AttnCase {
  const char *name;
  int64_t heads, batch, Tq, Tk, D, Dv;
  bool causal;
  int mask; // 0 none, 1 one [Tq, Tk] matrix for all heads, 2 one per head
  bool bias;
  float dropout;
  int64_t parts = 1, rank = 0, firstRow = 0;
};

void attentionCase(FloatType t, const AttnCase &a) {
  cpu::AttentionConfig c;
  c.BH = a.heads * a.batch;
  c.Tq = a.Tq; c.Tk = a.Tk; c.D = a.D; c.Dv = a.Dv;
  c.scale = 1.0f / std::sqrt(float(a.D));
  c.causal = a.causal;
  c.dropout = a.dropout;
  c.seed = 0xabcdef12345ull;
  c.headsLocal = a.heads;
  c.headsTotal = a.heads * a.parts;
  c.headStart = a.rank * a.heads;
  c.firstRow = a.firstRow;
  Floats q = rounded(uniform(c.BH * c.Tq * c.D, 150, -2, 2), t);
  Floats k = rounded(uniform(c.BH * c.Tk * c.D, 151, -2, 2), t);
  Floats v = rounded(uniform(c.BH * c.Tk * c.Dv, 152), t);
  // Mask and bias share maskHeads (cpu::AttentionConfig).
  c.maskHeads = a.mask == 2 || a.bias ? c.BH : 1;
  std::vector<uint8_t> mask;
  Floats bias = a.bias ? uniform(c.BH * c.Tq * c.Tk, 154) : Floats(1, 0.0f);
  DevBuf dmask(size_t(c.BH * c.Tq * c.Tk), 1);
  DevFloats dbias(F32, bias);
  if (a.mask) { // random, and query row 1 fully masked (attends to nothing)
    mask.resize(c.maskHeads * c.Tq * c.Tk);
    std::mt19937 gen(153);
    for (size_t i = 0; i < mask.size(); ++i)
      mask[i] = gen() % 4 == 0 || int64_t(i) / c.Tk % c.Tq == 1;
    toDevice(dmask, mask);
  }
  cpu::AttentionConfig gc = c;
  gc.mask = a.mask ? dmask.as<uint8_t>() : nullptr;
  gc.bias = a.bias ? dbias.f32() : nullptr;
  c.mask = a.mask ? mask.data() : nullptr;
  c.bias = a.bias ? bias.data() : nullptr;
  const std::string sh = shapeStr({c.BH, c.Tq, c.Tk, c.D});
  DevFloats dq(t, q), dk(t, k), dv(t, v), dout(t, size_t(c.BH * c.Tq * c.Dv));
  if (!ok(ck::attentionForward(env().stream, t, dout.get(), nullptr, dq.get(),
                               dk.get(), dv.get(), gc),
          a.name))
    return;
  Floats ref(c.BH * c.Tq * c.Dv);
  cpu::attentionForward(ref.data(), nullptr, q.data(), k.data(), v.data(), c);
  check(std::string("attention ") + a.name, t, sh, dout.read(), rounded(ref, t));
  Floats g = rounded(uniform(ref.size(), 155), t);
  DevFloats dg(t, g), gq(t, q.size()), gk(t, k.size()), gv(t, v.size());
  Workspace ws(ck::attentionBackwardWorkspaceBytes(gc));
  if (!ok(ck::attentionBackward(env().stream, t, gq.get(), gk.get(), gv.get(),
                                dg.get(), dq.get(), dk.get(), dv.get(), gc,
                                ws.get()),
          std::string("attention_grad ") + a.name))
    return;
  Floats rq(q.size()), rk(k.size()), rv(v.size());
  cpu::attentionBackward(rq.data(), rk.data(), rv.data(), g.data(), nullptr,
                         q.data(), k.data(), v.data(), c);
  const std::string n = std::string("attention_grad ") + a.name;
  check(n + " dq", t, sh, gq.read(), rounded(rq, t));
  check(n + " dk", t, sh, gk.read(), rounded(rk, t));
  check(n + " dv", t, sh, gv.read(), rounded(rv, t));

  // The tensor-core path, its workspace capped at three heads so the
  // chunk loop runs.
  const size_t cap = ck::attentionGemmWorkspaceBytes(gc, t, true, 0) * 3;
  Workspace gws(cap);
  DevFloats gout(t, ref.size()), hq(t, q.size()), hk(t, k.size()),
      hv(t, v.size());
  const std::string gn = std::string("attention gemm-path ") + a.name;
  if (!ok(ck::attentionForwardGemm(env().blas, env().stream, t, gout.get(),
                                   dq.get(), dk.get(), dv.get(), gc, gws.get(),
                                   cap),
          gn))
    return;
  check(gn, t, sh, gout.read(), rounded(ref, t),
        t == F32 ? kTolF32 : 2 * toleranceOf(t));
  if (!ok(ck::attentionBackwardGemm(env().blas, env().stream, t, hq.get(),
                                    hk.get(), hv.get(), dg.get(), dq.get(),
                                    dk.get(), dv.get(), gc, gws.get(), cap),
          gn + " grad"))
    return;
  const double gt = t == F32 ? kTolF32 : 2 * toleranceOf(t);
  check(gn + " grad dq", t, sh, hq.read(), rounded(rq, t), gt);
  check(gn + " grad dk", t, sh, hk.read(), rounded(rk, t), gt);
  check(gn + " grad dv", t, sh, hv.read(), rounded(rv, t), gt);
}
} // namespace

void checkNorms() {
  for (FloatType t : {F32, BF16}) {
    layerNormCase(t, 300, 768, true);
    rmsNormCase(t, 300, 768);
  }
  layerNormCase(F32, 7, 50, false);
  layerNormCase(F32, 20, 2000, true);  // 16 columns per thread
  layerNormCase(F32, 9, 5000, true);   // wider: the generic kernels
  softmaxCase(F32, {64, 1000}, 1, false);
  softmaxCase(F32, {64, 1000}, 1, true);
  softmaxCase(F32, {6, 33, 20}, 1, false);
  softmaxCase(F32, {6, 33, 20}, 1, true);
  softmaxCase(BF16, {64, 1000}, 1, false);
}

void checkLossAndEmbedding() {
  crossEntropyCase(F32, 130, 5003, false);
  crossEntropyCase(F32, 64, 1000, true);
  crossEntropyCase(BF16, 128, 5003, false);
  embeddingCase(F32, 2000, 503, 96);
  embeddingCase(BF16, 512, 300, 64);
}

void checkAttention() {
  const AttnCase cases[] = {
      {"causal D16", 4, 2, 64, 64, 16, 16, true, 0, false, 0.0f},
      {"mask Tq!=Tk", 2, 2, 40, 70, 64, 32, false, 1, false, 0.0f},
      {"mask+bias per head", 2, 2, 33, 45, 48, 48, true, 2, true, 0.0f},
      {"causal dropout TP-split", 2, 3, 37, 37, 32, 32, true, 0, false,
       0.1f, 2, 1, 4},
      {"causal D128 dropout", 2, 1, 130, 130, 128, 128, true, 0, false,
       0.2f},
      // Rows longer than the register row kernels take (2048 columns).
      {"long rows Tk=2100 dropout", 1, 2, 9, 2100, 16, 16, false, 0, false,
       0.1f},
  };
  for (const AttnCase &a : cases)
    attentionCase(F32, a);
  attentionCase(BF16, {"causal D64", 4, 2, 128, 128, 64, 64, true, 0, false,
                       0.0f});
}

void checkOptimizer() {
  const int64_t n = 10001;
  Floats p0 = uniform(n, 160), g = uniform(n, 161), m0 = uniform(n, 162),
         v0 = uniform(n, 163, 0.0f, 0.1f);
  cpu::AdamWConfig cfg;
  cfg.lr = 1e-3f;
  cfg.weightDecay = 0.1f;
  DevFloats dp(F32, p0), dg(F32, g), dm(F32, m0), dv(F32, v0),
      scale(F32, Floats{0.8f});
  if (ok(ck::adamw(env().stream, dp.f32(), dg.f32(), dm.f32(), dv.f32(), n,
                   cfg, 3, scale.f32()),
         "adamw_update")) {
    Floats p = p0, m = m0, v = v0;
    cpu::AdamWConfig c2 = cfg;
    c2.gradScale = 0.8f;
    cpu::adamwUpdate(p.data(), g.data(), m.data(), v.data(), n, c2, 3);
    check("adamw_update param", F32, shapeStr({n}), dp.read(), p);
    check("adamw_update m", F32, shapeStr({n}), dm.read(), m);
    check("adamw_update v", F32, shapeStr({n}), dv.read(), v);
  }
  { // SGD, the formula of runtime/exec/OptimizerKernels.cpp, steps 1 and 2
    DevFloats sp(F32, p0), sb(F32, size_t(n));
    Floats p = p0, buf(n);
    bool good = true;
    for (int64_t step = 1; step <= 2 && good; ++step) {
      good = ok(ck::sgd(env().stream, sp.f32(), dg.f32(), sb.f32(), n, 0.01f,
                        0.9f, 0.01f, step, scale.f32()),
                "sgd_update");
      for (int64_t i = 0; i < n; ++i) {
        float d = g[i] * 0.8f + 0.01f * p[i];
        buf[i] = step == 1 ? d : 0.9f * buf[i] + d;
        p[i] -= 0.01f * buf[i];
      }
    }
    if (good)
      check("sgd_update (2 steps)", F32, shapeStr({n}), sp.read(), p);
  }
  { // clip_grad_norm over three tensors, then loss-scale unscaling
    Floats a = uniform(5000, 170), b = uniform(3, 171), c = uniform(70001, 172);
    DevFloats da(F32, a), db(F32, b), dc(F32, c), norm(F32, size_t(1)),
        factor(F32, size_t(1));
    const float *ptrs[] = {da.f32(), db.f32(), dc.f32()};
    const int64_t sizes[] = {5000, 3, 70001};
    Workspace ws(ck::gradNormWorkspaceBytes(sizes, 3));
    if (ok(ck::clipGradNorm(env().stream, ptrs, sizes, 3, 1.0, norm.f32(),
                            factor.f32(), ws.get()),
           "clip_grad_norm")) {
      double ss = 0;
      for (const Floats *f : {&a, &b, &c})
        for (float x : *f)
          ss += double(x) * x;
      double nrm = std::sqrt(ss);
      check("clip_grad_norm norm", F32, "3 tensors", norm.read(),
            Floats{float(nrm)});
      check("clip_grad_norm factor", F32, "3 tensors", factor.read(),
            Floats{float(std::min(1.0, 1.0 / (nrm + 1e-6)))});
    }
    Floats withInf = b;
    withInf[1] = INFINITY;
    DevFloats dinf(F32, withInf), lossScale(F32, Floats{1024.0f});
    DevBuf found(1, 4), good(1, 4);
    float *gs[] = {da.f32(), dinf.f32()};
    const int64_t gsz[] = {5000, 3};
    if (ok(ck::unscaleAndCheck(env().stream, gs, gsz, 1, lossScale.f32(),
                               found.as<int>()),
           "loss-scale unscale")) {
      Floats ref = a;
      for (float &x : ref)
        x *= 1.0f / 1024.0f;
      check("loss-scale unscale", F32, "[5000]", da.read(), ref, 0.0);
      checkExact("loss-scale finite: no flag", "[5000]",
                 fromDevice<int>(found, 1)[0] == 0, "");
    }
    if (ok(ck::unscaleAndCheck(env().stream, gs, gsz, 2, lossScale.f32(),
                               found.as<int>()),
           "loss-scale unscale") &&
        ok(ck::updateLossScale(env().stream, lossScale.f32(), good.as<int>(),
                               found.as<int>(), 2.0f, 0.5f, 2000),
           "loss-scale update")) {
      checkExact("loss-scale inf: flagged, backed off", "[3]",
                 fromDevice<int>(found, 1)[0] == 1 &&
                     lossScale.read()[0] == 512.0f,
                 "scale " + std::to_string(lossScale.read()[0]));
    }
  }
}

} // namespace frenzy::kcheck
