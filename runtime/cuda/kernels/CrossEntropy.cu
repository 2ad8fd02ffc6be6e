//===- CrossEntropy.cu - softmax cross-entropy fused with its gradient ----===//
//
// Three launches, no host round trip: (1) count the rows that count (the
// target is not ignore_index) and report a label outside [0, V);
// (2) one block per row: the max and the sum of e^(z - max) in one online
// sweep (each thread rescales its running sum when its max grows; the
// block combines (max, sum) pairs), the row's loss lse - z[target] and,
// when asked, the gradient dloss * factor * (softmax - onehot) in a second
// sweep (the fused form: the logits are read twice); (3) one block adds the
// row losses in order and divides by the count (mean) as the CPU does.
// Workspace: N doubles of row losses and the count.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

constexpr int kRowThreads = 256;

__global__ void countRowsKernel(const int64_t *targets, int64_t N, int64_t V,
                                int64_t ignore, int64_t *counted,
                                int64_t *bad) {
  __shared__ int64_t shared[32];
  int64_t n = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    int64_t t = targets[i];
    if (t == ignore)
      continue;
    ++n;
    if (t < 0 || t >= V)
      reportBad(bad, i);
  }
  n = blockSum(n, shared);
  if (threadIdx.x == 0)
    *counted = n;
}

/// Combines per-thread (max, sum of e^(x - max)) over the block; every
/// thread gets the row's pair. Fixed shuffle tree: deterministic.
__device__ __forceinline__ void blockMaxSum(float &m, double &sum,
                                           float *sm, double *ss) {
  auto merge = [](float &m1, double &s1, float m2, double s2) {
    const float M = fmaxf(m1, m2);
    if (M == -INFINITY)
      return; // both empty
    s1 = s1 * double(expf(m1 - M)) + s2 * double(expf(m2 - M));
    m1 = M;
  };
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const double s2 = __shfl_xor_sync(0xffffffffu, sum, o);
    merge(m, sum, m2, s2);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = sum;
  }
  __syncthreads();
  const int warps = blockDim.x >> 5;
  m = lane < warps ? sm[lane] : -INFINITY;
  sum = lane < warps ? ss[lane] : 0.0;
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const double s2 = __shfl_xor_sync(0xffffffffu, sum, o);
    merge(m, sum, m2, s2);
  }
}

template <typename T>
__global__ void crossEntropyRowKernel(double *rowLoss, T *dlogits,
                                      const T *logits, const int64_t *targets,
                                      int64_t N, int64_t V, int64_t ignore,
                                      bool reductionSum, const float *dloss,
                                      const int64_t *counted) {
  __shared__ float sharedF[32];
  __shared__ double sharedD[32];
  const int64_t cnt = *counted;
  // The CPU: dloss * factor, factor = counted for sum; then / counted.
  const float up = dloss ? *dloss : 1.0f;
  const float scale =
      cnt ? (reductionSum ? (up * float(cnt)) / float(cnt) : up / float(cnt))
          : 0.0f;
  for (int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const int64_t t = targets[row];
    const bool skip = t == ignore || t < 0 || t >= V;
    T *d = dlogits ? dlogits + row * V : nullptr;
    if (skip) {
      if (d)
        for (int64_t j = threadIdx.x; j < V; j += blockDim.x)
          d[j] = fromF<T>(0.0f);
      if (threadIdx.x == 0)
        rowLoss[row] = 0.0;
      continue;
    }
    const T *z = logits + row * V;
    float mx = -INFINITY, part = 0.0f;
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x) {
      const float v = toF(z[j]);
      if (v > mx) {
        part = part * expf(mx - v) + 1.0f; // 0 * e^-inf = 0 at the start
        mx = v;
      } else if (v != -INFINITY) { // -inf - -inf would be NaN
        part += expf(v - mx);
      }
    }
    double sum = part;
    blockMaxSum(mx, sum, sharedF, sharedD);
    if (threadIdx.x == 0)
      rowLoss[row] = double(mx) + ::log(sum) - double(toF(z[t]));
    if (d) {
      const float s = float(scale / sum);
      for (int64_t j = threadIdx.x; j < V; j += blockDim.x) {
        float g = expf(toF(z[j]) - mx) * s;
        d[j] = fromF<T>(j == t ? g - scale : g);
      }
    }
  }
}

__global__ void finishLossKernel(float *loss, const double *rowLoss, int64_t N,
                                 const int64_t *counted, bool reductionSum) {
  __shared__ double shared[32];
  double acc = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
    acc += rowLoss[i];
  acc = blockSum(acc, shared);
  if (threadIdx.x == 0) {
    const int64_t cnt = *counted;
    float mean = cnt ? float(acc / double(cnt)) : 0.0f;
    *loss = reductionSum ? mean * float(cnt) : mean;
  }
}

} // namespace

size_t crossEntropyWorkspaceBytes(int64_t N) {
  return size_t(N + 1) * sizeof(double);
}

Status crossEntropy(cudaStream_t s, FloatType t, float *loss, void *dlogits,
                    const void *logits, const int64_t *targets, int64_t N,
                    int64_t V, int64_t ignoreIndex, bool reductionSum,
                    const float *dloss, int64_t *badIndex, void *workspace) {
  if (N <= 0) {
    if (loss)
      return cudaStatus("softmax_cross_entropy_loss",
                        cudaMemsetAsync(loss, 0, sizeof(float), s));
    return {};
  }
  double *rowLoss = static_cast<double *>(workspace);
  int64_t *counted = reinterpret_cast<int64_t *>(rowLoss + N);
  countRowsKernel<<<1, 1024, 0, s>>>(targets, N, V, ignoreIndex, counted,
                                     badIndex);
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    crossEntropyRowKernel<T><<<blocksFor(N, 1), kRowThreads, 0, s>>>(
        rowLoss, static_cast<T *>(dlogits), static_cast<const T *>(logits),
        targets, N, V, ignoreIndex, reductionSum, dloss, counted);
  });
  if (loss)
    finishLossKernel<<<1, 1024, 0, s>>>(loss, rowLoss, N, counted,
                                        reductionSum);
  return launched("softmax_cross_entropy_loss");
}

Status crossEntropyGrad(cudaStream_t s, FloatType t, void *dlogits,
                        const void *logits, const int64_t *targets, int64_t N,
                        int64_t V, int64_t ignoreIndex, bool reductionSum,
                        const float *dloss, int64_t *badIndex,
                        void *workspace) {
  return crossEntropy(s, t, nullptr, dlogits, logits, targets, N, V,
                      ignoreIndex, reductionSum, dloss, badIndex, workspace);
}

} // namespace frenzy::cuda::kernels
