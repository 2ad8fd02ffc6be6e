//===- Reduce.cu - reductions over axes and the adjoint of broadcasting ---===//
//
// Output element o reduces the input elements whose kept-dim index is o's,
// visited in row-major order of the reduced dims, accumulating in double
// as the CPU does. Few outputs with long reductions (a loss mean, a bias
// gradient over tokens) take one block per output and a fixed-order block
// sum; many outputs take one thread each. Either way the result does not
// depend on timing.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

/// Index maps of the kept dims (indexed by the output element) and of the
/// reduced dims (indexed by the position within the reduction).
struct ReduceGeometry {
  BroadcastMap<1> kept, reduced;
  int64_t outN = 1, count = 1;
};

template <cpu::ReduceKind K> __device__ __forceinline__ double init() {
  if constexpr (K == cpu::ReduceKind::Max) return -INFINITY;
  else if constexpr (K == cpu::ReduceKind::Min) return INFINITY;
  else return 0.0;
}
template <cpu::ReduceKind K>
__device__ __forceinline__ double combine(double a, double b) {
  if constexpr (K == cpu::ReduceKind::Max) return a < b ? b : a;
  else if constexpr (K == cpu::ReduceKind::Min) return b < a ? b : a;
  else return a + b;
}
template <cpu::ReduceKind K>
__device__ __forceinline__ float finish(double a, int64_t count) {
  return float(K == cpu::ReduceKind::Mean ? a / double(count) : a);
}

template <cpu::ReduceKind K>
__global__ void reduceThreadKernel(float *out, const float *in,
                                   ReduceGeometry g) {
  FRENZY_GRID_STRIDE(o, g.outN) {
    int64_t base[1], off[1];
    g.kept.offsets(o, base);
    double acc = init<K>();
    for (int64_t r = 0; r < g.count; ++r) {
      g.reduced.offsets(r, off);
      acc = combine<K>(acc, double(in[base[0] + off[0]]));
    }
    out[o] = finish<K>(acc, g.count);
  }
}

template <cpu::ReduceKind K>
__global__ void reduceBlockKernel(float *out, const float *in,
                                  ReduceGeometry g) {
  __shared__ double shared[32];
  for (int64_t o = blockIdx.x; o < g.outN; o += gridDim.x) {
    int64_t base[1], off[1];
    g.kept.offsets(o, base);
    double acc = init<K>();
    for (int64_t r = threadIdx.x; r < g.count; r += blockDim.x) {
      g.reduced.offsets(r, off);
      acc = combine<K>(acc, double(in[base[0] + off[0]]));
    }
    // Warp then block combine in a fixed tree.
    for (int m = 16; m > 0; m >>= 1)
      acc = combine<K>(acc, __shfl_xor_sync(0xffffffffu, acc, m));
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
      shared[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
      double v = threadIdx.x < (blockDim.x >> 5) ? shared[threadIdx.x] : init<K>();
      for (int m = 16; m > 0; m >>= 1)
        v = combine<K>(v, __shfl_xor_sync(0xffffffffu, v, m));
      if (threadIdx.x == 0)
        out[o] = finish<K>(v, g.count);
    }
  }
}

bool addDim(BroadcastMap<1> &m, int64_t dim, int64_t stride) {
  if (dim == 1)
    return true;
  if (m.rank == kMaxRank)
    return false;
  m.dims[m.rank] = dim;
  m.strides[0][m.rank++] = stride;
  return true;
}

template <cpu::ReduceKind K>
Status runReduce(cudaStream_t s, float *out, const float *in,
                 const Shape &inShape, const std::vector<bool> &isReduced,
                 const char *name) {
  ReduceGeometry g;
  int64_t stride = 1;
  std::vector<int64_t> strides(inShape.size());
  for (size_t d = inShape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= inShape[d];
  }
  for (size_t d = 0; d < inShape.size(); ++d) {
    bool ok = isReduced[d] ? addDim(g.reduced, inShape[d], strides[d])
                           : addDim(g.kept, inShape[d], strides[d]);
    if (!ok)
      return rankTooHigh(name, inShape.size());
    (isReduced[d] ? g.count : g.outN) *= inShape[d];
  }
  if (g.outN <= 0)
    return {};
  if (g.count >= 1024 && g.outN < 4096)
    reduceBlockKernel<K><<<unsigned(g.outN), 256, 0, s>>>(out, in, g);
  else
    reduceThreadKernel<K><<<blocksFor(g.outN), kThreads, 0, s>>>(out, in, g);
  return launched(name);
}

} // namespace

Status reduce(cudaStream_t s, cpu::ReduceKind k, float *out, const float *in,
              const Shape &inShape, const std::vector<int64_t> &axes) {
  std::vector<bool> isReduced(inShape.size(), false);
  for (int64_t a : axes)
    if (a >= 0 && size_t(a) < inShape.size())
      isReduced[a] = true;
  using R = cpu::ReduceKind;
  switch (k) {
  case R::Sum: return runReduce<R::Sum>(s, out, in, inShape, isReduced, "reduce_sum");
  case R::Mean: return runReduce<R::Mean>(s, out, in, inShape, isReduced, "reduce_mean");
  case R::Max: return runReduce<R::Max>(s, out, in, inShape, isReduced, "reduce_max");
  case R::Min: return runReduce<R::Min>(s, out, in, inShape, isReduced, "reduce_min");
  }
  return Status::error("reduce: unknown kind");
}

Status sumToShape(cudaStream_t s, float *out, const Shape &outShape,
                  const float *in, const Shape &inShape) {
  // outShape right-aligned against inShape; a dim it lacks or has as 1
  // (while the input's is not) is summed over.
  std::vector<bool> isReduced(inShape.size(), false);
  const size_t lead = inShape.size() - std::min(inShape.size(), outShape.size());
  for (size_t d = 0; d < inShape.size(); ++d) {
    int64_t od = d < lead ? 1 : outShape[d - lead];
    isReduced[d] = od == 1 && inShape[d] != 1;
  }
  return runReduce<cpu::ReduceKind::Sum>(s, out, in, inShape, isReduced,
                                         "unbroadcast");
}

} // namespace frenzy::cuda::kernels
