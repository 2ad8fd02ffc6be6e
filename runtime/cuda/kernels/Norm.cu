//===- Norm.cu - LayerNorm and RMSNorm, forward and backward --------------===//
//
// One block per row (rows of C up to any width: threads stride over the
// columns). LayerNorm takes the CPU's two passes (mean, then the centred
// variance) so a large mean does not eat the variance's digits; RMSNorm
// sums in double as the CPU does. Backward recomputes the row statistics
// from x (layer_norm_grad has no saved statistics). The weight gradients
// are column sums over rows: a fixed grid of G blocks each adds its rows
// into its own slice of the workspace, then one pass adds the G slices in
// order into the accumulating gradient: deterministic, no atomics.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

constexpr int kNormThreads = 256;
constexpr int64_t kMaxGroups = 256;

int64_t groupsFor(int64_t N) { return N < kMaxGroups ? (N < 1 ? 1 : N) : kMaxGroups; }

template <typename T>
__device__ void rowMeanRstd(const T *x, int64_t C, float eps, float &mean,
                            float &rstd, float *shared) {
  float acc = 0.0f;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
    acc += toF(x[c]);
  mean = blockSum(acc, shared) / float(C);
  acc = 0.0f;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    float d = toF(x[c]) - mean;
    acc += d * d;
  }
  float var = blockSum(acc, shared) / float(C);
  rstd = 1.0f / sqrtf(var + eps);
}

template <typename T>
__global__ void layerNormForwardKernel(T *out, float *mean, float *rstd,
                                       const T *x, const float *w,
                                       const float *b, int64_t N, int64_t C,
                                       float eps) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T *xr = x + row * C;
    float m, s;
    rowMeanRstd(xr, C, eps, m, s, shared);
    T *y = out + row * C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      float v = (toF(xr[c]) - m) * s * w[c];
      y[c] = fromF<T>(b ? v + b[c] : v);
    }
    if (threadIdx.x == 0) {
      if (mean) mean[row] = m;
      if (rstd) rstd[row] = s;
    }
  }
}

/// Block g handles rows g, g + G, ...; partial [G, 2, C] gets its column
/// sums of dy * xhat (dweight) and dy (dbias).
template <typename T>
__global__ void layerNormBackwardKernel(T *dx, float *partial, const T *dout,
                                        const T *x, const float *w, int64_t N,
                                        int64_t C, float eps) {
  __shared__ float shared[32];
  float *pw = partial + blockIdx.x * 2 * C, *pb = pw + C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
    pw[c] = pb[c] = 0.0f;
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T *xr = x + row * C, *dy = dout + row * C;
    float m, s;
    rowMeanRstd(xr, C, eps, m, s, shared);
    float sumD = 0.0f, sumDX = 0.0f;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      float xhat = (toF(xr[c]) - m) * s, g = toF(dy[c]);
      float d = g * w[c];
      sumD += d;
      sumDX += d * xhat;
      pw[c] += g * xhat; // this thread owns column c of the block's slice
      pb[c] += g;
    }
    const float meanD = blockSum(sumD, shared) / float(C);
    const float meanDX = blockSum(sumDX, shared) / float(C);
    T *dxr = dx + row * C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      float xhat = (toF(xr[c]) - m) * s;
      dxr[c] = fromF<T>(s * (toF(dy[c]) * w[c] - meanD - xhat * meanDX));
    }
  }
}

/// Rows of up to kNormThreads * K columns with each thread's K values of
/// x (and dy) in registers: each row is read from memory once, and the
/// backward's column partials stay in registers until the block's last
/// row (the generic kernels above re-read rows and update the partials in
/// memory). Same formulas and per-block partial slices.
template <typename T, int K>
__global__ void layerNormForwardRegKernel(T *out, float *mean, float *rstd,
                                          const T *x, const float *w,
                                          const float *b, int64_t N, int64_t C,
                                          float eps) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T *xr = x + row * C;
    float xv[K], acc = 0.0f;
    for (int u = 0; u < K; ++u) {
      const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
      xv[u] = c < C ? toF(xr[c]) : 0.0f;
      acc += xv[u];
    }
    const float m = blockSum(acc, shared) / float(C);
    acc = 0.0f;
    for (int u = 0; u < K; ++u) {
      const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
      const float d = c < C ? xv[u] - m : 0.0f;
      acc += d * d;
    }
    const float sd = 1.0f / sqrtf(blockSum(acc, shared) / float(C) + eps);
    T *y = out + row * C;
    for (int u = 0; u < K; ++u) {
      const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
      if (c < C) {
        const float v = (xv[u] - m) * sd * w[c];
        y[c] = fromF<T>(b ? v + b[c] : v);
      }
    }
    if (threadIdx.x == 0) {
      if (mean) mean[row] = m;
      if (rstd) rstd[row] = sd;
    }
  }
}

template <typename T, int K>
__global__ void layerNormBackwardRegKernel(T *dx, float *partial,
                                          const T *dout, const T *x,
                                          const float *w, int64_t N, int64_t C,
                                          float eps) {
  __shared__ float shared[32];
  float pw[K], pb[K], wv[K];
  for (int u = 0; u < K; ++u) {
    const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
    pw[u] = pb[u] = 0.0f;
    wv[u] = c < C ? w[c] : 0.0f;
  }
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T *xr = x + row * C, *dy = dout + row * C;
    float xv[K], gv[K], acc = 0.0f;
    for (int u = 0; u < K; ++u) {
      const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
      xv[u] = c < C ? toF(xr[c]) : 0.0f;
      gv[u] = c < C ? toF(dy[c]) : 0.0f;
      acc += xv[u];
    }
    const float m = blockSum(acc, shared) / float(C);
    acc = 0.0f;
    for (int u = 0; u < K; ++u) {
      const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
      const float d = c < C ? xv[u] - m : 0.0f;
      acc += d * d;
    }
    const float sd = 1.0f / sqrtf(blockSum(acc, shared) / float(C) + eps);
    float sumD = 0.0f, sumDX = 0.0f;
    for (int u = 0; u < K; ++u) {
      xv[u] = (xv[u] - m) * sd; // xhat from here on (0 past C: gv is 0)
      const float d = gv[u] * wv[u];
      sumD += d;
      sumDX += d * xv[u];
      pw[u] += gv[u] * xv[u];
      pb[u] += gv[u];
    }
    const float meanD = blockSum(sumD, shared) / float(C);
    const float meanDX = blockSum(sumDX, shared) / float(C);
    T *dxr = dx + row * C;
    for (int u = 0; u < K; ++u) {
      const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
      if (c < C)
        dxr[c] = fromF<T>(sd * (gv[u] * wv[u] - meanD - xv[u] * meanDX));
    }
  }
  float *ps = partial + blockIdx.x * 2 * C;
  for (int u = 0; u < K; ++u) {
    const int64_t c = threadIdx.x + int64_t(u) * blockDim.x;
    if (c < C) {
      ps[c] = pw[u];
      ps[C + c] = pb[u];
    }
  }
}

/// grad[c] += sum over the G slices of partial[g * stride + c], in order.
__global__ void addColumnPartials(float *grad, const float *partial,
                                  int64_t groups, int64_t stride, int64_t C) {
  FRENZY_GRID_STRIDE(c, C) {
    float acc = 0.0f;
    for (int64_t g = 0; g < groups; ++g)
      acc += partial[g * stride + c];
    grad[c] += acc;
  }
}

template <typename T>
__global__ void rmsNormForwardKernel(T *out, const T *x, const float *scale,
                                     int64_t N, int64_t C, float eps) {
  __shared__ double shared[32];
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T *xr = x + row * C;
    double ss = 0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      double v = toF(xr[c]);
      ss += v * v;
    }
    const float r = float(1.0 / sqrt(blockSum(ss, shared) / double(C) + eps));
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
      out[row * C + c] = fromF<T>(toF(xr[c]) * r * scale[c]);
  }
}

template <typename T>
__global__ void rmsNormBackwardKernel(T *dx, float *partial, const T *dout,
                                      const T *x, const float *scale,
                                      int64_t N, int64_t C, float eps) {
  __shared__ double shared[32];
  float *ps = partial + blockIdx.x * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
    ps[c] = 0.0f;
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T *xr = x + row * C, *dy = dout + row * C;
    double ss = 0, dot = 0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      double v = toF(xr[c]);
      ss += v * v;
      dot += double(toF(dy[c])) * scale[c] * v;
    }
    const double r = 1.0 / sqrt(blockSum(ss, shared) / double(C) + eps);
    const double k = blockSum(dot, shared) * r * r * r / double(C);
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float g = toF(dy[c]), v = toF(xr[c]);
      dx[row * C + c] = fromF<T>(float(r * g * scale[c] - v * k));
      ps[c] += float(double(g * v) * r);
    }
  }
}

} // namespace

Status layerNormForward(cudaStream_t s, FloatType t, void *out, float *mean,
                        float *rstd, const void *x, const float *weight,
                        const float *bias, int64_t N, int64_t C, float eps) {
  if (N <= 0 || C <= 0)
    return {};
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    T *y = static_cast<T *>(out);
    const T *xi = static_cast<const T *>(x);
    if (C <= kNormThreads * 4)
      layerNormForwardRegKernel<T, 4><<<blocksFor(N, 1), kNormThreads, 0, s>>>(
          y, mean, rstd, xi, weight, bias, N, C, eps);
    else if (C <= kNormThreads * 16)
      layerNormForwardRegKernel<T, 16>
          <<<blocksFor(N, 1), kNormThreads, 0, s>>>(y, mean, rstd, xi, weight,
                                                    bias, N, C, eps);
    else
      layerNormForwardKernel<T><<<blocksFor(N, 1), kNormThreads, 0, s>>>(
          y, mean, rstd, xi, weight, bias, N, C, eps);
  });
  return launched("layer_norm");
}

size_t layerNormBackwardWorkspaceBytes(int64_t N, int64_t C) {
  return size_t(groupsFor(N) * 2 * C) * sizeof(float);
}

Status layerNormBackward(cudaStream_t s, FloatType t, void *dx,
                         float *dweight, float *dbias, const void *dout,
                         const void *x, const float *weight, int64_t N,
                         int64_t C, float eps, void *workspace) {
  if (N <= 0 || C <= 0)
    return {};
  const int64_t G = groupsFor(N);
  float *partial = static_cast<float *>(workspace);
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    T *g = static_cast<T *>(dx);
    const T *dy = static_cast<const T *>(dout), *xi = static_cast<const T *>(x);
    if (C <= kNormThreads * 4)
      layerNormBackwardRegKernel<T, 4><<<unsigned(G), kNormThreads, 0, s>>>(
          g, partial, dy, xi, weight, N, C, eps);
    else if (C <= kNormThreads * 16)
      layerNormBackwardRegKernel<T, 16><<<unsigned(G), kNormThreads, 0, s>>>(
          g, partial, dy, xi, weight, N, C, eps);
    else
      layerNormBackwardKernel<T><<<unsigned(G), kNormThreads, 0, s>>>(
          g, partial, dy, xi, weight, N, C, eps);
  });
  Status st = launched("layer_norm_grad");
  if (!st.ok())
    return st;
  addColumnPartials<<<blocksFor(C), kThreads, 0, s>>>(dweight, partial, G,
                                                      2 * C, C);
  if (dbias)
    addColumnPartials<<<blocksFor(C), kThreads, 0, s>>>(dbias, partial + C, G,
                                                        2 * C, C);
  return launched("layer_norm_grad");
}

Status rmsNormForward(cudaStream_t s, FloatType t, void *out, const void *x,
                      const float *scale, int64_t N, int64_t C, float eps) {
  if (N <= 0 || C <= 0)
    return {};
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    rmsNormForwardKernel<T><<<blocksFor(N, 1), kNormThreads, 0, s>>>(
        static_cast<T *>(out), static_cast<const T *>(x), scale, N, C, eps);
  });
  return launched("rms_norm");
}

size_t rmsNormBackwardWorkspaceBytes(int64_t N, int64_t C) {
  return size_t(groupsFor(N) * C) * sizeof(float);
}

Status rmsNormBackward(cudaStream_t s, FloatType t, void *dx, float *dscale,
                       const void *dout, const void *x, const float *scale,
                       int64_t N, int64_t C, float eps, void *workspace) {
  if (N <= 0 || C <= 0)
    return {};
  const int64_t G = groupsFor(N);
  float *partial = static_cast<float *>(workspace);
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    rmsNormBackwardKernel<T><<<unsigned(G), kNormThreads, 0, s>>>(
        static_cast<T *>(dx), partial, static_cast<const T *>(dout),
        static_cast<const T *>(x), scale, N, C, eps);
  });
  Status st = launched("rms_norm_grad");
  if (!st.ok())
    return st;
  addColumnPartials<<<blocksFor(C), kThreads, 0, s>>>(dscale, partial, G, C, C);
  return launched("rms_norm_grad");
}

} // namespace frenzy::cuda::kernels
