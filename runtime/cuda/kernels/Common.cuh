//===- Common.cuh - shared device helpers of the CUDA kernels ---*- CUDA -*-===//
//
// Typed loads and stores (activations are f32, bf16 or f16; math is f32),
// launch geometry, broadcast index maps (rank <= 8, passed by value), the
// warp/block reductions, and the Status of a launch. Included by every .cu
// of the kernels; not part of the host API.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_KERNELS_COMMON_CUH
#define FRENZY_RUNTIME_CUDA_KERNELS_COMMON_CUH

#include "CounterRng.h"
#include "CudaKernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace frenzy::cuda::kernels {

//===--- typed storage ----------------------------------------------------===//

__device__ __forceinline__ float toF(float x) { return x; }
__device__ __forceinline__ float toF(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float toF(__half x) { return __half2float(x); }
template <typename T> __device__ __forceinline__ T fromF(float x);
template <> __device__ __forceinline__ float fromF<float>(float x) {
  return x;
}
template <> __device__ __forceinline__ __nv_bfloat16 fromF(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ __forceinline__ __half fromF(float x) {
  return __float2half_rn(x);
}

/// Calls f(T{}) with T the storage type of t (a host-side dispatch).
template <typename F> void withFloatType(FloatType t, F &&f) {
  switch (t) {
  case FloatType::F32: f(float{}); break;
  case FloatType::BF16: f(__nv_bfloat16{}); break;
  case FloatType::F16: f(__half{}); break;
  }
}

//===--- launch geometry and status ---------------------------------------===//

constexpr int kThreads = 256;

inline unsigned blocksFor(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  // A grid-stride loop covers the rest; 2^20 blocks keep every SM busy.
  return unsigned(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

#define FRENZY_GRID_STRIDE(i, n)                                               \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);    \
       i += int64_t(blockDim.x) * gridDim.x)

/// The Status of the launch just made (cudaGetLastError).
Status launched(const char *kernel);
Status cudaStatus(const char *what, cudaError_t e);
Status blasStatus(const char *what, cublasStatus_t e);

//===--- broadcast index maps ---------------------------------------------===//

constexpr int kMaxRank = 8;

/// Output dims and, per operand, the element strides read through
/// broadcasting (0 on a broadcast dim). Passed to kernels by value.
template <int Ops> struct BroadcastMap {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[Ops][kMaxRank] = {};

  /// Offsets of output element i in each operand.
  __device__ __forceinline__ void offsets(int64_t i, int64_t off[Ops]) const {
    for (int o = 0; o < Ops; ++o)
      off[o] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t q = i / dims[d], r = i - q * dims[d];
      i = q;
      for (int o = 0; o < Ops; ++o)
        off[o] += r * strides[o][d];
    }
  }
};

/// Builds the map of `shapes` (right-aligned) broadcast to outShape; false
/// when the rank is above kMaxRank. Unit output dims are dropped (they do
/// not move any offset) to save divisions.
template <int Ops>
bool makeBroadcastMap(BroadcastMap<Ops> &m, const Shape &outShape,
                      const Shape *const shapes[Ops]) {
  int64_t s[Ops][kMaxRank * 2] = {};
  size_t R = outShape.size();
  for (int o = 0; o < Ops; ++o) {
    const Shape &in = *shapes[o];
    int64_t stride = 1;
    for (size_t k = 0; k < in.size() && k < R; ++k) {
      size_t d = in.size() - 1 - k, od = R - 1 - k;
      s[o][od] = in[d] == 1 ? 0 : stride;
      stride *= in[d];
    }
  }
  m.rank = 0;
  for (size_t d = 0; d < R; ++d) {
    if (outShape[d] == 1)
      continue;
    if (m.rank == kMaxRank)
      return false;
    m.dims[m.rank] = outShape[d];
    for (int o = 0; o < Ops; ++o)
      m.strides[o][m.rank] = s[o][d];
    ++m.rank;
  }
  return true;
}

Status rankTooHigh(const char *kernel, size_t rank);

//===--- reductions -------------------------------------------------------===//

template <typename T> __device__ __forceinline__ T warpSum(T v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, <= 1024), returned to
/// every thread; `shared` holds 32 values. Fixed order: deterministic.
template <typename T>
__device__ __forceinline__ T blockSum(T v, T *shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpSum(v);
  __syncthreads(); // shared may still be read from a previous call
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  T r = lane < warps ? shared[lane] : T(0);
  return warpSum(r);
}

__device__ __forceinline__ float blockMax(float v, float *shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpMax(v);
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  float r = lane < warps ? shared[lane] : -INFINITY;
  return warpMax(r);
}

/// Records the first bad position: the smallest index wins (atomicMin on
/// the bits works because the caller initialised *bad to -1, the largest
/// unsigned value).
__device__ __forceinline__ void reportBad(int64_t *bad, int64_t pos) {
  if (bad)
    atomicMin(reinterpret_cast<unsigned long long *>(bad),
              (unsigned long long)pos);
}

} // namespace frenzy::cuda::kernels

#endif
