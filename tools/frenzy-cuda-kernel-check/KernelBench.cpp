//===- KernelBench.cpp - kernel timings at GPT-2 124M shapes --------------===//
//
// frenzy-cuda-kernel-check --bench times the kernels a GPT-2 124M step
// spends its time in (B = 8, T = 1024, C = 768, 12 heads, V = 50257), in
// bf16 as the mixed-precision policy runs them: median of 20 launches
// after 3 warm-ups, CUDA events on one stream. It prints milliseconds and
// TFLOP/s (GEMM, attention) or GB/s (memory-bound kernels), so docs/cuda.md
// can say where a step goes and how far each kernel is from the chip.
//
//===----------------------------------------------------------------------===//
#include "CheckHarness.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

namespace frenzy::kcheck {

namespace ck = cuda::kernels;

namespace {
constexpr FloatType BF16 = FloatType::BF16, F32 = FloatType::F32;

double medianMs(const std::function<Status()> &launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i)
    (void)launch();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(a, env().stream);
    Status s = launch();
    cudaEventRecord(b, env().stream);
    cudaEventSynchronize(b);
    if (!s.ok()) {
      std::printf("  error: %s\n", s.message().c_str());
      return -1;
    }
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void report(const char *name, double ms, double flops, double bytes) {
  if (ms < 0)
    return;
  std::printf("%-44s %9.3f ms", name, ms);
  if (flops > 0)
    std::printf("  %8.1f TFLOP/s", flops / ms / 1e9);
  if (bytes > 0)
    std::printf("  %8.1f GB/s", bytes / ms / 1e6);
  std::printf("\n");
}
} // namespace

void runBench() {
  const int64_t B = 8, T = 1024, C = 768, H = 12, D = 64, V = 50257,
                N = B * T;
  cudaStream_t s = env().stream;
  std::printf("kernel timings, GPT-2 124M shapes (B=%lld T=%lld C=%lld "
              "H=%lld V=%lld), median of 20\n",
              (long long)B, (long long)T, (long long)C, (long long)H,
              (long long)V);
  { // GEMMs: the fc layer forward, its weight gradient, the LM head
    DevFloats x(BF16, size_t(N * 4 * C)), w(BF16, size_t(4 * C * C)),
        y(BF16, size_t(N * 4 * C)), gw(F32, size_t(4 * C * C));
    report("gemm bf16 fc fwd [8192x768]x[768x3072]",
           medianMs([&] {
             return ck::gemm(env().blas, s, false, false, N, 4 * C, C, 1.0f,
                             x.get(), w.get(), BF16, 0.0f, y.get(), BF16);
           }),
           2.0 * N * 4 * C * C, 0);
    report("gemm bf16 fc dW [768x8192]x[8192x3072] +=f32",
           medianMs([&] {
             return ck::gemm(env().blas, s, true, false, C, 4 * C, N, 1.0f,
                             x.get(), y.get(), BF16, 1.0f, gw.get(), F32);
           }),
           2.0 * N * 4 * C * C, 0);
    DevFloats xf(F32, size_t(N * C)), wf(F32, size_t(C * 4 * C)),
        yf(F32, size_t(N * 4 * C));
    report("gemm f32 fc fwd (IEEE fp32, no TF32)",
           medianMs([&] {
             return ck::gemm(env().blas, s, false, false, N, 4 * C, C, 1.0f,
                             xf.get(), wf.get(), F32, 0.0f, yf.get(), F32);
           }),
           2.0 * N * 4 * C * C, 0);
  }
  {
    DevFloats x(BF16, size_t(N * C)), wte(BF16, size_t(50304 * C)),
        logits(BF16, size_t(N * 50304)), dlogits(BF16, size_t(N * V)),
        loss(F32, size_t(1));
    report("gemm bf16 lm head [8192x768]x[768x50257]^T",
           medianMs([&] {
             return ck::gemm(env().blas, s, false, true, N, V, C, 1.0f, x.get(),
                             wte.get(), BF16, 0.0f, logits.get(), BF16);
           }),
           2.0 * N * V * C, 0);
    const int64_t Vp = 50304; // the vocabulary padded to a multiple of 128
    report("gemm bf16 lm head, V padded to 50304",
           medianMs([&] {
             return ck::gemm(env().blas, s, false, true, N, Vp, C, 1.0f,
                             x.get(), wte.get(), BF16, 0.0f, logits.get(),
                             BF16);
           }),
           2.0 * N * Vp * C, 0);
    DevBuf labels(N, 8), bad(1, 8), ws((ck::crossEntropyWorkspaceBytes(N) + 7) / 8, 8);
    report("cross_entropy fused loss+grad bf16",
           medianMs([&] {
             return ck::crossEntropy(s, BF16, loss.f32(), dlogits.get(),
                                     logits.get(), labels.as<int64_t>(), N, V,
                                     -100, false, nullptr, bad.as<int64_t>(),
                                     ws.get());
           }),
           0, 2.0 * 2 * N * V);
  }
  {
    cpu::AttentionConfig c;
    c.BH = B * H;
    c.Tq = c.Tk = T;
    c.D = c.Dv = D;
    c.scale = 0.125f;
    c.causal = true;
    c.headsLocal = c.headsTotal = H;
    DevFloats q(BF16, size_t(c.BH * T * D)), k(BF16, size_t(c.BH * T * D)),
        v(BF16, size_t(c.BH * T * D)), o(BF16, size_t(c.BH * T * D)),
        dq(BF16, size_t(c.BH * T * D)), dk(BF16, size_t(c.BH * T * D)),
        dv(BF16, size_t(c.BH * T * D));
    DevBuf ws((ck::attentionBackwardWorkspaceBytes(c) + 7) / 8, 8);
    const double fwdFlops = 4.0 * c.BH * T * T * D / 2; // causal half
    report("attention fwd bf16 causal BH=96 T=1024 D=64",
           medianMs([&] {
             return ck::attentionForward(s, BF16, o.get(), nullptr, q.get(),
                                         k.get(), v.get(), c);
           }),
           fwdFlops, 0);
    report("attention bwd bf16 (3 passes)",
           medianMs([&] {
             return ck::attentionBackward(s, BF16, dq.get(), dk.get(), dv.get(),
                                          o.get(), q.get(), k.get(), v.get(),
                                          c, ws.get());
           }),
           2.5 * fwdFlops, 0);
    const size_t cap = size_t(1) << 30; // 1 GiB of scores per pass
    DevBuf gws((ck::attentionGemmWorkspaceBytes(c, BF16, true, cap) + 7) / 8, 8);
    report("attention fwd bf16 gemm path (tensor cores)",
           medianMs([&] {
             return ck::attentionForwardGemm(env().blas, s, BF16, o.get(),
                                             q.get(), k.get(), v.get(), c,
                                             gws.get(), cap);
           }),
           fwdFlops, 0);
    report("attention bwd bf16 gemm path",
           medianMs([&] {
             return ck::attentionBackwardGemm(env().blas, s, BF16, dq.get(),
                                              dk.get(), dv.get(), o.get(),
                                              q.get(), k.get(), v.get(), c,
                                              gws.get(), cap);
           }),
           2.5 * fwdFlops, 0);
    const size_t small = size_t(64) << 20; // 6 heads a chunk
    report("attention fwd gemm path, 64 MiB workspace cap",
           medianMs([&] {
             return ck::attentionForwardGemm(env().blas, s, BF16, o.get(),
                                             q.get(), k.get(), v.get(), c,
                                             gws.get(), small);
           }),
           fwdFlops, 0);
    report("attention bwd gemm path, 64 MiB workspace cap",
           medianMs([&] {
             return ck::attentionBackwardGemm(env().blas, s, BF16, dq.get(),
                                              dk.get(), dv.get(), o.get(),
                                              q.get(), k.get(), v.get(), c,
                                              gws.get(), small);
           }),
           2.5 * fwdFlops, 0);
  }
  {
    DevFloats x(BF16, size_t(N * C)), y(BF16, size_t(N * C)),
        w(F32, size_t(C)), b(F32, size_t(C)), dw(F32, size_t(C)),
        db(F32, size_t(C)), dx(BF16, size_t(N * C));
    DevBuf ws((ck::layerNormBackwardWorkspaceBytes(N, C) + 7) / 8, 8);
    report("layer_norm fwd bf16 [8192x768]",
           medianMs([&] {
             return ck::layerNormForward(s, BF16, y.get(), nullptr, nullptr,
                                         x.get(), w.f32(), b.f32(), N, C,
                                         1e-5f);
           }),
           0, 2.0 * 2 * N * C);
    report("layer_norm_grad bf16",
           medianMs([&] {
             return ck::layerNormBackward(s, BF16, dx.get(), dw.f32(), db.f32(),
                                          y.get(), x.get(), w.f32(), N, C,
                                          1e-5f, ws.get());
           }),
           0, 2.0 * 3 * N * C);
    DevFloats h(BF16, size_t(N * 4 * C)), g(BF16, size_t(N * 4 * C));
    report("gelu_tanh fwd bf16 [8192x3072]",
           medianMs([&] {
             return ck::unary(s, cpu::UnaryKind::GeluTanh, BF16, g.get(),
                              h.get(), N * 4 * C);
           }),
           0, 2.0 * 2 * N * 4 * C);
  }
  { // the token embedding's backward: deterministic owner-computes scatter
    DevFloats dtab(F32, size_t(V * C)), g(BF16, size_t(N * C));
    DevBuf ids(N, 8);
    std::vector<int64_t> hostIds(N);
    for (int64_t i = 0; i < N; ++i)
      hostIds[i] = (i * 7919) % V; // spread over the vocabulary
    toDevice(ids, hostIds);
    report("embedding_grad bf16->f32 [8192 ids x 768]",
           medianMs([&] {
             return ck::embeddingBackward(s, BF16, dtab.f32(), g.get(),
                                          ids.as<int64_t>(), N, V, C);
           }),
           0, 2.0 * N * C + 8.0 * N * C);
  }
  {
    const int64_t P = 124439808; // GPT-2 124M parameters
    DevFloats p(F32, size_t(P)), g(F32, size_t(P)), m(F32, size_t(P)),
        v(F32, size_t(P));
    cpu::AdamWConfig cfg;
    report("adamw_update f32, 124M parameters",
           medianMs([&] {
             return ck::adamw(s, p.f32(), g.f32(), m.f32(), v.f32(), P, cfg, 1,
                              nullptr);
           }),
           0, 4.0 * 7 * P);
  }
}

} // namespace frenzy::kcheck
