//===- Softmax.cu - softmax and log-softmax over any axis -----------------===//
//
// The shape is [outer, n, inner] as on the CPU. The last axis (inner == 1:
// scores, logits) runs one block per row: max, the sum of e^(x - max) in
// double, then the scaled store. Other axes run one thread per (outer,
// inner) lane walking the n values `inner` apart, so a warp reads 32
// neighbouring lanes together. Backward sums dout * y (or dout) along the
// axis in double and applies the CPU's formulas.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

constexpr int kRowThreads = 256;

template <typename T>
__global__ void softmaxRowKernel(T *out, const T *in, int64_t rows, int64_t n,
                                 bool log) {
  __shared__ float sharedF[32];
  __shared__ double sharedD[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = in + row * n;
    T *y = out + row * n;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      mx = fmaxf(mx, toF(x[j]));
    mx = blockMax(mx, sharedF);
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += expf(toF(x[j]) - mx);
    sum = blockSum(sum, sharedD);
    if (log) {
      const double lse = double(mx) + ::log(sum);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        y[j] = fromF<T>(float(double(toF(x[j])) - lse));
    } else {
      const float inv = float(1.0 / sum);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        y[j] = fromF<T>(expf(toF(x[j]) - mx) * inv);
    }
  }
}

template <typename T>
__global__ void softmaxLaneKernel(T *out, const T *in, int64_t outer,
                                  int64_t n, int64_t inner, bool log) {
  FRENZY_GRID_STRIDE(lane, outer * inner) {
    const int64_t o = lane / inner, i = lane - o * inner;
    const T *x = in + o * n * inner + i;
    T *y = out + o * n * inner + i;
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; ++j)
      mx = fmaxf(mx, toF(x[j * inner]));
    double sum = 0;
    for (int64_t j = 0; j < n; ++j)
      sum += expf(toF(x[j * inner]) - mx);
    const double k = log ? ::log(sum) : 1.0 / sum;
    for (int64_t j = 0; j < n; ++j) {
      float z = toF(x[j * inner]) - mx;
      y[j * inner] = fromF<T>(log ? float(z - k) : float(expf(z) * k));
    }
  }
}

template <typename T>
__global__ void softmaxGradRowKernel(T *din, const T *dout, const T *yv,
                                     int64_t rows, int64_t n, bool log) {
  __shared__ double shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *dy = dout + row * n, *y = yv + row * n;
    double acc = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      acc += log ? double(toF(dy[j])) : double(toF(dy[j])) * toF(y[j]);
    acc = blockSum(acc, shared);
    T *dx = din + row * n;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      float g = toF(dy[j]), v = toF(y[j]);
      dx[j] = fromF<T>(log ? float(g - expf(v) * acc) : float(v * (g - acc)));
    }
  }
}

template <typename T>
__global__ void softmaxGradLaneKernel(T *din, const T *dout, const T *yv,
                                      int64_t outer, int64_t n, int64_t inner,
                                      bool log) {
  FRENZY_GRID_STRIDE(lane, outer * inner) {
    const int64_t o = lane / inner, i = lane - o * inner;
    const int64_t base = o * n * inner + i;
    double acc = 0;
    for (int64_t j = 0; j < n; ++j) {
      double g = toF(dout[base + j * inner]);
      acc += log ? g : g * toF(yv[base + j * inner]);
    }
    for (int64_t j = 0; j < n; ++j) {
      int64_t e = base + j * inner;
      float g = toF(dout[e]), v = toF(yv[e]);
      din[e] = fromF<T>(log ? float(g - expf(v) * acc) : float(v * (g - acc)));
    }
  }
}

} // namespace

Status softmax(cudaStream_t s, FloatType t, void *out, const void *in,
               int64_t outer, int64_t n, int64_t inner, bool log) {
  if (outer * n * inner <= 0)
    return {};
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    T *y = static_cast<T *>(out);
    const T *x = static_cast<const T *>(in);
    if (inner == 1)
      softmaxRowKernel<T><<<blocksFor(outer, 1), kRowThreads, 0, s>>>(
          y, x, outer, n, log);
    else
      softmaxLaneKernel<T><<<blocksFor(outer * inner), kThreads, 0, s>>>(
          y, x, outer, n, inner, log);
  });
  return launched(log ? "log_softmax" : "softmax");
}

Status softmaxGrad(cudaStream_t s, FloatType t, void *din, const void *dout,
                   const void *y, int64_t outer, int64_t n, int64_t inner,
                   bool log) {
  if (outer * n * inner <= 0)
    return {};
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    T *dx = static_cast<T *>(din);
    const T *dy = static_cast<const T *>(dout), *yy = static_cast<const T *>(y);
    if (inner == 1)
      softmaxGradRowKernel<T><<<blocksFor(outer, 1), kRowThreads, 0, s>>>(
          dx, dy, yy, outer, n, log);
    else
      softmaxGradLaneKernel<T><<<blocksFor(outer * inner), kThreads, 0, s>>>(
          dx, dy, yy, outer, n, inner, log);
  });
  return launched("softmax_grad");
}

} // namespace frenzy::cuda::kernels
