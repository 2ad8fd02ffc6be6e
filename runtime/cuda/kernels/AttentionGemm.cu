//===- AttentionGemm.cu - attention through tensor-core GEMMs -------------===//
//
// The same attention as Attention.cu (and runtime/cpu/Attention.cpp), with
// the four products on cuBLASLt strided-batched GEMMs (tensor cores for
// bf16/f16, IEEE fp32 for f32) and the softmax, masking and dropout in row
// kernels between them. It keeps a [heads, Tq, Tk] score matrix per chunk
// of heads in the workspace, so it trades memory traffic for tensor-core
// speed: at GPT-2 shapes (T = 1024, D = 64) the CUDA-core flash kernels of
// Attention.cu reach about 2 TFLOP/s, far below the GEMMs.
// Forward: S = scale q k^T (f32); P = softmax(S + bias, masked);
//          Pd = dropout(P) (type T); out = Pd v.
// Backward: S and P again; dv = Pd^T dout; dPd = dout v^T (f32);
//          dS = P * (f dPd - rowsum(f dPd P)) (type T);
//          dq = scale dS k; dk = scale dS^T q.
// Heads run in chunks sized so the workspace stays under a cap; the mask,
// bias and dropout stream are indexed by the global head as everywhere.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

#include <algorithm>

namespace frenzy::cuda::kernels {
namespace {

constexpr int kRowThreads = 256;

struct RowParams {
  int64_t Tq, Tk, maskHeads, head0;
  bool causal;
  const uint8_t *mask;
  const float *bias;
  float dropout, keep;
  uint64_t seed;
  int64_t headsLocal, headsTotal, headStart, firstRow;

  __device__ __forceinline__ bool live(int64_t h, int64_t i, int64_t j,
                                       int64_t &e) const {
    e = (maskHeads > 1 ? h : 0) * Tq * Tk + i * Tk + j;
    return !(causal && j > i) && !(mask && mask[e]);
  }
  __device__ __forceinline__ float factor(int64_t h, int64_t i,
                                          int64_t j) const {
    if (dropout <= 0.0f)
      return 1.0f;
    uint64_t g = rng::globalHead(h, headsLocal, headsTotal, headStart, firstRow);
    return rng::dropped(seed, rng::attentionElement(g, Tq, Tk, i, j), dropout)
               ? 0.0f
               : keep;
  }
};

/// Row (chunk head hc, query i) of S [chunk, Tq, Tk]: the masked softmax P.
/// Writes P (f32, in place into S) when keepP, and Pd = dropout(P) as T.
template <typename T>
__global__ void softmaxRowsKernel(float *S, T *Pd, RowParams p, bool keepP) {
  __shared__ float sharedF[32];
  const int64_t row = blockIdx.x, hc = row / p.Tq, i = row % p.Tq;
  const int64_t h = p.head0 + hc;
  float *s = S + row * p.Tk;
  T *pd = Pd + row * p.Tk;
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < p.Tk; j += blockDim.x) {
    int64_t e;
    float v = p.live(h, i, j, e) ? s[j] + (p.bias ? p.bias[e] : 0.0f) : -INFINITY;
    s[j] = v;
    mx = fmaxf(mx, v);
  }
  mx = blockMax(mx, sharedF);
  float sum = 0.0f;
  if (mx != -INFINITY)
    for (int64_t j = threadIdx.x; j < p.Tk; j += blockDim.x)
      sum += expf(s[j] - mx);
  sum = blockSum(sum, sharedF);
  const float inv = mx == -INFINITY ? 0.0f : 1.0f / sum;
  for (int64_t j = threadIdx.x; j < p.Tk; j += blockDim.x) {
    float P = mx == -INFINITY ? 0.0f : expf(s[j] - mx) * inv;
    if (keepP)
      s[j] = P;
    pd[j] = fromF<T>(P * p.factor(h, i, j));
  }
}

/// dS = P * (f dPd - rowsum(f dPd P)) for a row; P f32, dPd f32, dS as T.
template <typename T>
__global__ void softmaxGradRowsKernel(T *dS, const float *P, const float *dPd,
                                      RowParams p) {
  __shared__ float sharedF[32];
  const int64_t row = blockIdx.x, hc = row / p.Tq, i = row % p.Tq;
  const int64_t h = p.head0 + hc;
  const float *pr = P + row * p.Tk, *gr = dPd + row * p.Tk;
  float dot = 0.0f;
  for (int64_t j = threadIdx.x; j < p.Tk; j += blockDim.x)
    dot += gr[j] * p.factor(h, i, j) * pr[j];
  dot = blockSum(dot, sharedF);
  T *d = dS + row * p.Tk;
  for (int64_t j = threadIdx.x; j < p.Tk; j += blockDim.x)
    d[j] = fromF<T>(pr[j] * (gr[j] * p.factor(h, i, j) - dot));
}

/// The same two row kernels for rows of up to kRowThreads * K columns,
/// each thread keeping its K values in registers: the scores are read from
/// memory once (the generic kernels above read them three times), and a
/// causal row never reads the columns past its query.
constexpr int kRegCols = 8;

template <typename T, int K>
__global__ void softmaxRowsRegKernel(float *S, T *Pd, RowParams p, bool keepP) {
  __shared__ float sharedF[32];
  const int64_t row = blockIdx.x, hc = row / p.Tq, i = row % p.Tq;
  const int64_t h = p.head0 + hc;
  float *s = S + row * p.Tk;
  T *pd = Pd + row * p.Tk;
  float v[K];
  float mx = -INFINITY;
  for (int u = 0; u < K; ++u) {
    const int64_t j = threadIdx.x + int64_t(u) * blockDim.x;
    int64_t e;
    v[u] = j < p.Tk && p.live(h, i, j, e)
               ? s[j] + (p.bias ? p.bias[e] : 0.0f)
               : -INFINITY;
    mx = fmaxf(mx, v[u]);
  }
  mx = blockMax(mx, sharedF);
  float sum = 0.0f;
  for (int u = 0; u < K; ++u) {
    v[u] = mx == -INFINITY || v[u] == -INFINITY ? 0.0f : expf(v[u] - mx);
    sum += v[u];
  }
  sum = blockSum(sum, sharedF);
  const float inv = mx == -INFINITY ? 0.0f : 1.0f / sum;
  for (int u = 0; u < K; ++u) {
    const int64_t j = threadIdx.x + int64_t(u) * blockDim.x;
    if (j >= p.Tk)
      break;
    const float P = v[u] * inv;
    if (keepP)
      s[j] = P;
    pd[j] = fromF<T>(P == 0.0f ? 0.0f : P * p.factor(h, i, j));
  }
}

template <typename T, int K>
__global__ void softmaxGradRowsRegKernel(T *dS, const float *P,
                                         const float *dPd, RowParams p) {
  __shared__ float sharedF[32];
  const int64_t row = blockIdx.x, hc = row / p.Tq, i = row % p.Tq;
  const int64_t h = p.head0 + hc;
  const float *pr = P + row * p.Tk, *gr = dPd + row * p.Tk;
  float pv[K], gv[K];
  float dot = 0.0f;
  for (int u = 0; u < K; ++u) {
    const int64_t j = threadIdx.x + int64_t(u) * blockDim.x;
    pv[u] = gv[u] = 0.0f;
    if (j >= p.Tk || (p.causal && j > i))
      continue; // P is 0 there: nothing to read
    pv[u] = pr[j];
    gv[u] = pv[u] == 0.0f ? 0.0f : gr[j] * p.factor(h, i, j);
    dot += gv[u] * pv[u];
  }
  dot = blockSum(dot, sharedF);
  T *d = dS + row * p.Tk;
  for (int u = 0; u < K; ++u) {
    const int64_t j = threadIdx.x + int64_t(u) * blockDim.x;
    if (j >= p.Tk)
      break;
    d[j] = fromF<T>(pv[u] * (gv[u] - dot));
  }
}

RowParams rowParams(const cpu::AttentionConfig &c, int64_t head0) {
  RowParams p;
  p.Tq = c.Tq; p.Tk = c.Tk; p.maskHeads = c.maskHeads; p.head0 = head0;
  p.causal = c.causal; p.mask = c.mask; p.bias = c.bias;
  p.dropout = c.dropout;
  p.keep = c.dropout > 0.0f ? 1.0f / (1.0f - c.dropout) : 1.0f;
  p.seed = c.seed;
  p.headsLocal = c.headsLocal; p.headsTotal = c.headsTotal;
  p.headStart = c.headStart; p.firstRow = c.firstRow;
  return p;
}

/// Per-head workspace: forward S (f32) + Pd (T); backward S/P, dPd (f32)
/// and Pd/dS (T).
size_t perHeadBytes(const cpu::AttentionConfig &c, FloatType t, bool backward) {
  return size_t(c.Tq * c.Tk) * ((backward ? 8 : 4) + floatBytes(t));
}

int64_t chunkHeads(const cpu::AttentionConfig &c, FloatType t, bool backward,
                   size_t cap) {
  size_t per = std::max<size_t>(perHeadBytes(c, t, backward), 1);
  return std::max<int64_t>(1, std::min<int64_t>(c.BH, int64_t(cap / per)));
}

const char *ptrAt(const void *p, int64_t elems, FloatType t) {
  return static_cast<const char *>(p) + elems * floatBytes(t);
}

} // namespace

size_t attentionGemmWorkspaceBytes(const cpu::AttentionConfig &c, FloatType t,
                                   bool backward, size_t cap) {
  return size_t(chunkHeads(c, t, backward, cap)) * perHeadBytes(c, t, backward);
}

Status attentionForwardGemm(const BlasHandles &h, cudaStream_t s, FloatType t,
                            void *out, const void *q, const void *k,
                            const void *v, const cpu::AttentionConfig &c,
                            void *workspace, size_t workspaceBytes) {
  if (c.BH * c.Tq == 0)
    return {};
  const int64_t chunk = chunkHeads(c, t, false, workspaceBytes);
  float *S = static_cast<float *>(workspace);
  void *Pd = S + chunk * c.Tq * c.Tk;
  for (int64_t h0 = 0; h0 < c.BH; h0 += chunk) {
    const int64_t n = std::min(chunk, c.BH - h0);
    Status st = gemm(h, s, false, true, c.Tq, c.Tk, c.D, c.scale,
                     ptrAt(q, h0 * c.Tq * c.D, t), ptrAt(k, h0 * c.Tk * c.D, t),
                     t, 0.0f, S, FloatType::F32, n, c.Tq * c.D, c.Tk * c.D,
                     c.Tq * c.Tk);
    if (!st.ok())
      return st;
    const RowParams p = rowParams(c, h0);
    withFloatType(t, [&](auto tag) {
      using T = decltype(tag);
      if (c.Tk <= kRowThreads * kRegCols)
        softmaxRowsRegKernel<T, kRegCols>
            <<<unsigned(n * c.Tq), kRowThreads, 0, s>>>(
                S, static_cast<T *>(Pd), p, false);
      else
        softmaxRowsKernel<T><<<unsigned(n * c.Tq), kRowThreads, 0, s>>>(
            S, static_cast<T *>(Pd), p, false);
    });
    if (!(st = launched("attention (gemm path)")).ok())
      return st;
    st = gemm(h, s, false, false, c.Tq, c.Dv, c.Tk, 1.0f, Pd,
              ptrAt(v, h0 * c.Tk * c.Dv, t), t, 0.0f,
              const_cast<char *>(ptrAt(out, h0 * c.Tq * c.Dv, t)), t, n,
              c.Tq * c.Tk, c.Tk * c.Dv, c.Tq * c.Dv);
    if (!st.ok())
      return st;
  }
  return {};
}

Status attentionBackwardGemm(const BlasHandles &h, cudaStream_t s, FloatType t,
                             void *dq, void *dk, void *dv, const void *dout,
                             const void *q, const void *k, const void *v,
                             const cpu::AttentionConfig &c, void *workspace,
                             size_t workspaceBytes) {
  const int64_t chunk = chunkHeads(c, t, true, workspaceBytes);
  const int64_t TT = c.Tq * c.Tk;
  float *S = static_cast<float *>(workspace), *dPd = S + chunk * TT;
  void *B1 = dPd + chunk * TT; // Pd, then dS (type T)
  auto at = [&](const void *p, int64_t e) { return ptrAt(p, e, t); };
  auto mut = [&](void *p, int64_t e) { return const_cast<char *>(ptrAt(p, e, t)); };
  for (int64_t h0 = 0; h0 < c.BH; h0 += chunk) {
    const int64_t n = std::min(chunk, c.BH - h0);
    const int64_t oq = h0 * c.Tq * c.D, ok = h0 * c.Tk * c.D,
                  ov = h0 * c.Tk * c.Dv, oo = h0 * c.Tq * c.Dv;
    Status st = gemm(h, s, false, true, c.Tq, c.Tk, c.D, c.scale, at(q, oq),
                     at(k, ok), t, 0.0f, S, FloatType::F32, n, c.Tq * c.D,
                     c.Tk * c.D, TT);
    if (!st.ok())
      return st;
    const RowParams p = rowParams(c, h0);
    withFloatType(t, [&](auto tag) {
      using T = decltype(tag);
      if (c.Tk <= kRowThreads * kRegCols)
        softmaxRowsRegKernel<T, kRegCols>
            <<<unsigned(n * c.Tq), kRowThreads, 0, s>>>(
                S, static_cast<T *>(B1), p, true);
      else
        softmaxRowsKernel<T><<<unsigned(n * c.Tq), kRowThreads, 0, s>>>(
            S, static_cast<T *>(B1), p, true);
    });
    if (!(st = launched("attention_grad (gemm path)")).ok())
      return st;
    // dv = Pd^T dout
    if (!(st = gemm(h, s, true, false, c.Tk, c.Dv, c.Tq, 1.0f, B1, at(dout, oo),
                    t, 0.0f, mut(dv, ov), t, n, TT, c.Tq * c.Dv, c.Tk * c.Dv))
             .ok())
      return st;
    // dPd = dout v^T (f32)
    if (!(st = gemm(h, s, false, true, c.Tq, c.Tk, c.Dv, 1.0f, at(dout, oo),
                    at(v, ov), t, 0.0f, dPd, FloatType::F32, n, c.Tq * c.Dv,
                    c.Tk * c.Dv, TT))
             .ok())
      return st;
    withFloatType(t, [&](auto tag) {
      using T = decltype(tag);
      if (c.Tk <= kRowThreads * kRegCols)
        softmaxGradRowsRegKernel<T, kRegCols>
            <<<unsigned(n * c.Tq), kRowThreads, 0, s>>>(static_cast<T *>(B1),
                                                        S, dPd, p);
      else
        softmaxGradRowsKernel<T><<<unsigned(n * c.Tq), kRowThreads, 0, s>>>(
            static_cast<T *>(B1), S, dPd, p);
    });
    if (!(st = launched("attention_grad (gemm path)")).ok())
      return st;
    // dq = scale dS k; dk = scale dS^T q
    if (!(st = gemm(h, s, false, false, c.Tq, c.D, c.Tk, c.scale, B1, at(k, ok),
                    t, 0.0f, mut(dq, oq), t, n, TT, c.Tk * c.D, c.Tq * c.D))
             .ok())
      return st;
    if (!(st = gemm(h, s, true, false, c.Tk, c.D, c.Tq, c.scale, B1, at(q, oq),
                    t, 0.0f, mut(dk, ok), t, n, TT, c.Tq * c.D, c.Tk * c.D))
             .ok())
      return st;
  }
  return {};
}

} // namespace frenzy::cuda::kernels
