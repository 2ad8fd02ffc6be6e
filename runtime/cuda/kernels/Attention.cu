//===- Attention.cu - flash-style scaled dot-product attention ------------===//
//
// S = scale q k^T + bias, masked (mask, causal) to -inf, P = softmax(S),
// out = dropout(P) v, as runtime/cpu/Attention.cpp, without ever holding a
// [Tq, Tk] matrix: keys stream through shared memory in tiles of 32, one
// key per lane, with an online softmax (running max m and sum l per row).
// Warps own query rows (forward, dq) or key rows (dk, dv); within a tile a
// lane computes one score, then the warp combines the 32 scores into the
// row's output, each lane owning head dims lane, lane + 32, ... (D <= 128).
// Dropout redraws rng::uniform(seed, (globalHead * Tq + i) * Tk + j), the
// CPU stream, so masks match.
//
// Backward (no forward output in the plan) takes three passes:
//  1. rows: the forward again, keeping only lse_i = m + log l and
//     delta_i = dout_i . out_i (= rowsum(dP * P), dropout included);
//  2. dq_i = scale sum_j dS_ij k_j with dS = P (dP - delta_i),
//     P = exp(S - lse_i), dP = f * (dout_i . v_j), per query row;
//  3. dk_j = scale sum_i dS_ij q_i, dv_j = sum_i f P_ij dout_i, per key
//     row, queries streaming through shared memory.
// Each output element is written by one thread: no atomics, deterministic.
// Compute is f32 on CUDA cores (inputs of any FloatType); a tensor-core
// version is future work (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

constexpr int kTile = 32;          // keys (or queries) per shared tile
constexpr int kWarps = 4;          // warps per block
constexpr int kD = int(kMaxHeadDim);
constexpr int kU = kD / 32;        // head dims per lane

struct Params {
  int64_t BH, Tq, Tk, D, Dv;
  float scale, dropout, keep;
  bool causal;
  const uint8_t *mask;
  const float *bias;
  int64_t maskHeads;
  uint64_t seed;
  int64_t headsLocal, headsTotal, headStart, firstRow;

  __device__ __forceinline__ int64_t maskBase(int64_t h) const {
    return (maskHeads > 1 ? h : 0) * Tq * Tk;
  }
  /// The scaled, biased score of (h, i, j) from the dot product, or -inf
  /// where masked or out of range.
  __device__ __forceinline__ float score(int64_t h, int64_t i, int64_t j,
                                         float dot) const {
    if (i >= Tq || j >= Tk || (causal && j > i))
      return -INFINITY;
    const int64_t e = maskBase(h) + i * Tk + j;
    if (mask && mask[e])
      return -INFINITY;
    return dot * scale + (bias ? bias[e] : 0.0f);
  }
  /// The dropout factor of (h, i, j): 0 or 1 / (1 - p) (1 without dropout).
  __device__ __forceinline__ float factor(int64_t h, int64_t i,
                                          int64_t j) const {
    if (dropout <= 0.0f)
      return 1.0f;
    const uint64_t g = rng::globalHead(h, headsLocal, headsTotal, headStart,
                                       firstRow);
    return rng::dropped(seed, rng::attentionElement(g, Tq, Tk, i, j), dropout)
               ? 0.0f
               : keep;
  }
};

/// rows x width of a [*, width] matrix from row r0 into shared s (row
/// stride ld), zero past `limit` rows; all threads of the block help.
template <typename T>
__device__ __forceinline__ void loadTile(float *s, int ld, const T *m,
                                         int64_t r0, int rows, int64_t limit,
                                         int64_t width) {
  for (int e = threadIdx.x; e < rows * kD; e += blockDim.x) {
    const int r = e / kD, d = e % kD;
    const int64_t row = r0 + r;
    s[r * ld + d] = row < limit && d < width ? toF(m[row * width + d]) : 0.0f;
  }
}

/// Forward over R query rows per warp. Delta: instead of the output, write
/// lse and delta = dout . out for the backward passes.
template <typename T, int R, bool Delta>
__global__ void __launch_bounds__(kWarps * 32)
    attentionRowsKernel(Params p, const T *q, const T *k, const T *v, T *out,
                        float *lse, const T *dout, float *delta) {
  __shared__ float Ks[kTile][kD + 1];
  __shared__ float Vs[kTile][kD];
  __shared__ float Qs[kWarps][R][kD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t h = blockIdx.y;
  const int64_t blockRow0 = int64_t(blockIdx.x) * kWarps * R;
  const int64_t row0 = blockRow0 + warp * R;
  const T *qh = q + h * p.Tq * p.D, *kh = k + h * p.Tk * p.D,
          *vh = v + h * p.Tk * p.Dv;
  for (int e = lane; e < R * kD; e += 32) {
    const int r = e / kD, d = e % kD;
    const int64_t i = row0 + r;
    Qs[warp][r][d] = i < p.Tq && d < p.D ? toF(qh[i * p.D + d]) : 0.0f;
  }
  float m[R], l[R], acc[R][kU];
  for (int r = 0; r < R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
    for (int u = 0; u < kU; ++u)
      acc[r][u] = 0.0f;
  }
  int64_t kEnd = p.Tk;
  if (p.causal)
    kEnd = min(kEnd, blockRow0 + kWarps * R);
  for (int64_t kt = 0; kt < kEnd; kt += kTile) {
    __syncthreads();
    loadTile(&Ks[0][0], kD + 1, kh, kt, kTile, p.Tk, p.D);
    loadTile(&Vs[0][0], kD, vh, kt, kTile, p.Tk, p.Dv);
    __syncthreads();
    const int64_t j = kt + lane;
    for (int r = 0; r < R; ++r) {
      const int64_t i = row0 + r;
      float dot = 0.0f;
      for (int d = 0; d < p.D; ++d)
        dot += Qs[warp][r][d] * Ks[lane][d];
      const float s = p.score(h, i, j, dot);
      const float newM = fmaxf(m[r], warpMax(s));
      if (newM == -INFINITY)
        continue; // nothing live yet in this row (warp-uniform)
      const float corr = expf(m[r] - newM);
      const float e = expf(s - newM);
      l[r] = l[r] * corr + warpSum(e);
      m[r] = newM;
      const float pd = e * p.factor(h, i, j);
      for (int u = 0; u < kU; ++u)
        acc[r][u] *= corr;
      for (int jj = 0; jj < kTile; ++jj) {
        const float pj = __shfl_sync(0xffffffffu, pd, jj);
        for (int u = 0; u < kU; ++u)
          acc[r][u] += pj * Vs[jj][lane + 32 * u];
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t i = row0 + r;
    if (i >= p.Tq)
      break;
    const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    const float rowLse = l[r] > 0.0f ? m[r] + logf(l[r]) : -INFINITY;
    if constexpr (Delta) {
      float dd = 0.0f;
      for (int u = 0; u < kU; ++u) {
        const int d = lane + 32 * u;
        if (d < p.Dv)
          dd += toF(dout[(h * p.Tq + i) * p.Dv + d]) * (acc[r][u] * inv);
      }
      dd = warpSum(dd);
      if (lane == 0) {
        lse[h * p.Tq + i] = rowLse;
        delta[h * p.Tq + i] = dd;
      }
    } else {
      for (int u = 0; u < kU; ++u) {
        const int d = lane + 32 * u;
        if (d < p.Dv)
          out[(h * p.Tq + i) * p.Dv + d] = fromF<T>(acc[r][u] * inv);
      }
      if (lse && lane == 0)
        lse[h * p.Tq + i] = rowLse;
    }
  }
}

/// dq over R query rows per warp (pass 2).
template <typename T, int R>
__global__ void __launch_bounds__(kWarps * 32)
    attentionDqKernel(Params p, const T *q, const T *k, const T *v,
                      const T *dout, const float *lse, const float *delta,
                      T *dq) {
  __shared__ float Ks[kTile][kD + 1];
  __shared__ float Vs[kTile][kD + 1];
  __shared__ float Qs[kWarps][R][kD];
  __shared__ float Os[kWarps][R][kD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t h = blockIdx.y;
  const int64_t blockRow0 = int64_t(blockIdx.x) * kWarps * R;
  const int64_t row0 = blockRow0 + warp * R;
  const T *qh = q + h * p.Tq * p.D, *kh = k + h * p.Tk * p.D,
          *vh = v + h * p.Tk * p.Dv, *oh = dout + h * p.Tq * p.Dv;
  float rowLse[R], rowDelta[R], acc[R][kU];
  for (int r = 0; r < R; ++r) {
    const int64_t i = row0 + r;
    rowLse[r] = i < p.Tq ? lse[h * p.Tq + i] : -INFINITY;
    rowDelta[r] = i < p.Tq ? delta[h * p.Tq + i] : 0.0f;
    for (int u = 0; u < kU; ++u)
      acc[r][u] = 0.0f;
  }
  for (int e = lane; e < R * kD; e += 32) {
    const int r = e / kD, d = e % kD;
    const int64_t i = row0 + r;
    Qs[warp][r][d] = i < p.Tq && d < p.D ? toF(qh[i * p.D + d]) : 0.0f;
    Os[warp][r][d] = i < p.Tq && d < p.Dv ? toF(oh[i * p.Dv + d]) : 0.0f;
  }
  int64_t kEnd = p.Tk;
  if (p.causal)
    kEnd = min(kEnd, blockRow0 + kWarps * R);
  for (int64_t kt = 0; kt < kEnd; kt += kTile) {
    __syncthreads();
    loadTile(&Ks[0][0], kD + 1, kh, kt, kTile, p.Tk, p.D);
    loadTile(&Vs[0][0], kD + 1, vh, kt, kTile, p.Tk, p.Dv);
    __syncthreads();
    const int64_t j = kt + lane;
    for (int r = 0; r < R; ++r) {
      const int64_t i = row0 + r;
      float dot = 0.0f, dpd = 0.0f;
      for (int d = 0; d < p.D; ++d)
        dot += Qs[warp][r][d] * Ks[lane][d];
      for (int d = 0; d < p.Dv; ++d)
        dpd += Os[warp][r][d] * Vs[lane][d];
      const float s = p.score(h, i, j, dot);
      const float P = s == -INFINITY || rowLse[r] == -INFINITY
                          ? 0.0f
                          : expf(s - rowLse[r]);
      const float dS = P * (dpd * p.factor(h, i, j) - rowDelta[r]);
      for (int jj = 0; jj < kTile; ++jj) {
        const float g = __shfl_sync(0xffffffffu, dS, jj);
        for (int u = 0; u < kU; ++u)
          acc[r][u] += g * Ks[jj][lane + 32 * u];
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t i = row0 + r;
    if (i >= p.Tq)
      break;
    for (int u = 0; u < kU; ++u) {
      const int d = lane + 32 * u;
      if (d < p.D)
        dq[(h * p.Tq + i) * p.D + d] = fromF<T>(acc[r][u] * p.scale);
    }
  }
}

/// dk and dv over R key rows per warp (pass 3).
template <typename T, int R>
__global__ void __launch_bounds__(kWarps * 32)
    attentionDkvKernel(Params p, const T *q, const T *k, const T *v,
                       const T *dout, const float *lse, const float *delta,
                       T *dk, T *dv) {
  __shared__ float Qs[kTile][kD + 1];
  __shared__ float Os[kTile][kD + 1];
  __shared__ float Ls[kTile], Ds[kTile];
  __shared__ float Kr[kWarps][R][kD];
  __shared__ float Vr[kWarps][R][kD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t h = blockIdx.y;
  const int64_t blockKey0 = int64_t(blockIdx.x) * kWarps * R;
  const int64_t key0 = blockKey0 + warp * R;
  const T *qh = q + h * p.Tq * p.D, *kh = k + h * p.Tk * p.D,
          *vh = v + h * p.Tk * p.Dv, *oh = dout + h * p.Tq * p.Dv;
  for (int e = lane; e < R * kD; e += 32) {
    const int r = e / kD, d = e % kD;
    const int64_t j = key0 + r;
    Kr[warp][r][d] = j < p.Tk && d < p.D ? toF(kh[j * p.D + d]) : 0.0f;
    Vr[warp][r][d] = j < p.Tk && d < p.Dv ? toF(vh[j * p.Dv + d]) : 0.0f;
  }
  float accK[R][kU], accV[R][kU];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < kU; ++u)
      accK[r][u] = accV[r][u] = 0.0f;
  // Causal: key j sees queries i >= j only.
  const int64_t qStart = p.causal ? blockKey0 / kTile * kTile : 0;
  for (int64_t qt = qStart; qt < p.Tq; qt += kTile) {
    __syncthreads();
    loadTile(&Qs[0][0], kD + 1, qh, qt, kTile, p.Tq, p.D);
    loadTile(&Os[0][0], kD + 1, oh, qt, kTile, p.Tq, p.Dv);
    if (threadIdx.x < kTile) {
      const int64_t i = qt + threadIdx.x;
      Ls[threadIdx.x] = i < p.Tq ? lse[h * p.Tq + i] : -INFINITY;
      Ds[threadIdx.x] = i < p.Tq ? delta[h * p.Tq + i] : 0.0f;
    }
    __syncthreads();
    const int64_t i = qt + lane;
    for (int r = 0; r < R; ++r) {
      const int64_t j = key0 + r;
      float dot = 0.0f, dpd = 0.0f;
      for (int d = 0; d < p.D; ++d)
        dot += Qs[lane][d] * Kr[warp][r][d];
      for (int d = 0; d < p.Dv; ++d)
        dpd += Os[lane][d] * Vr[warp][r][d];
      const float s = p.score(h, i, j, dot);
      const float P = s == -INFINITY || Ls[lane] == -INFINITY
                          ? 0.0f
                          : expf(s - Ls[lane]);
      const float f = p.factor(h, i, j);
      const float pd = P * f;
      const float dS = P * (dpd * f - Ds[lane]);
      for (int ii = 0; ii < kTile; ++ii) {
        const float a = __shfl_sync(0xffffffffu, pd, ii);
        const float g = __shfl_sync(0xffffffffu, dS, ii);
        for (int u = 0; u < kU; ++u) {
          accV[r][u] += a * Os[ii][lane + 32 * u];
          accK[r][u] += g * Qs[ii][lane + 32 * u];
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t j = key0 + r;
    if (j >= p.Tk)
      break;
    for (int u = 0; u < kU; ++u) {
      const int d = lane + 32 * u;
      if (d < p.D)
        dk[(h * p.Tk + j) * p.D + d] = fromF<T>(accK[r][u] * p.scale);
      if (d < p.Dv)
        dv[(h * p.Tk + j) * p.Dv + d] = fromF<T>(accV[r][u]);
    }
  }
}

constexpr int kRowsFwd = 4, kRowsDq = 2, kRowsDkv = 2;

Status checkShape(const cpu::AttentionConfig &c, const char *name) {
  if (c.D > kMaxHeadDim || c.Dv > kMaxHeadDim)
    return Status::error(std::string(name) + ": head dim " +
                         std::to_string(std::max(c.D, c.Dv)) +
                         " is above the CUDA kernel's limit of " +
                         std::to_string(kMaxHeadDim));
  if (c.BH > 65535)
    return Status::error(std::string(name) + ": " + std::to_string(c.BH) +
                         " batch*heads is above 65535 (one grid row each)");
  return {};
}

Params paramsOf(const cpu::AttentionConfig &c) {
  Params p;
  p.BH = c.BH; p.Tq = c.Tq; p.Tk = c.Tk; p.D = c.D; p.Dv = c.Dv;
  p.scale = c.scale;
  p.dropout = c.dropout;
  p.keep = c.dropout > 0.0f ? 1.0f / (1.0f - c.dropout) : 1.0f;
  p.causal = c.causal;
  p.mask = c.mask;
  p.bias = c.bias;
  p.maskHeads = c.maskHeads;
  p.seed = c.seed;
  p.headsLocal = c.headsLocal; p.headsTotal = c.headsTotal;
  p.headStart = c.headStart; p.firstRow = c.firstRow;
  return p;
}

dim3 gridOf(int64_t rows, int perBlock, int64_t BH) {
  return dim3(unsigned((rows + perBlock - 1) / perBlock), unsigned(BH));
}

} // namespace

Status attentionForward(cudaStream_t s, FloatType t, void *out, float *lse,
                        const void *q, const void *k, const void *v,
                        const cpu::AttentionConfig &c) {
  Status st = checkShape(c, "attention");
  if (!st.ok() || c.BH * c.Tq == 0)
    return st;
  const Params p = paramsOf(c);
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    attentionRowsKernel<T, kRowsFwd, false>
        <<<gridOf(c.Tq, kWarps * kRowsFwd, c.BH), kWarps * 32, 0, s>>>(
            p, static_cast<const T *>(q), static_cast<const T *>(k),
            static_cast<const T *>(v), static_cast<T *>(out), lse, nullptr,
            nullptr);
  });
  return launched("attention");
}

size_t attentionBackwardWorkspaceBytes(const cpu::AttentionConfig &c) {
  return size_t(2 * c.BH * c.Tq) * sizeof(float);
}

Status attentionBackward(cudaStream_t s, FloatType t, void *dq, void *dk,
                         void *dv, const void *dout, const void *q,
                         const void *k, const void *v,
                         const cpu::AttentionConfig &c, void *workspace) {
  Status st = checkShape(c, "attention_grad");
  if (!st.ok())
    return st;
  const Params p = paramsOf(c);
  float *lse = static_cast<float *>(workspace), *delta = lse + c.BH * c.Tq;
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    const T *Q = static_cast<const T *>(q), *K = static_cast<const T *>(k),
            *V = static_cast<const T *>(v), *dO = static_cast<const T *>(dout);
    if (c.BH * c.Tq > 0) {
      attentionRowsKernel<T, kRowsFwd, true>
          <<<gridOf(c.Tq, kWarps * kRowsFwd, c.BH), kWarps * 32, 0, s>>>(
              p, Q, K, V, nullptr, lse, dO, delta);
      attentionDqKernel<T, kRowsDq>
          <<<gridOf(c.Tq, kWarps * kRowsDq, c.BH), kWarps * 32, 0, s>>>(
              p, Q, K, V, dO, lse, delta, static_cast<T *>(dq));
    }
    if (c.BH * c.Tk > 0)
      attentionDkvKernel<T, kRowsDkv>
          <<<gridOf(c.Tk, kWarps * kRowsDkv, c.BH), kWarps * 32, 0, s>>>(
              p, Q, K, V, dO, lse, delta, static_cast<T *>(dk),
              static_cast<T *>(dv));
  });
  return launched("attention_grad");
}

} // namespace frenzy::cuda::kernels
