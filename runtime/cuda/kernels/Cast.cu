//===- Cast.cu - dtype casts, precision casts and fp16 loss scaling -------===//
//
// `cast` converts through double as the CPU does (float -> int truncates,
// anything -> bool is != 0). castFloat is the precision policy's f32 <->
// bf16/f16 conversion (round to nearest even). Loss scaling follows
// PyTorch's GradScaler: unscale every gradient, flag inf/NaN, and grow or
// back off the scale on the device, so no step waits on a copy back.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

__device__ __forceinline__ double loadAs(const void *p, cpu::DType t,
                                         int64_t i) {
  switch (t) {
  case cpu::DType::F32: return static_cast<const float *>(p)[i];
  case cpu::DType::I64: return double(static_cast<const int64_t *>(p)[i]);
  case cpu::DType::I32: return static_cast<const int32_t *>(p)[i];
  case cpu::DType::Bool: return static_cast<const uint8_t *>(p)[i];
  }
  return 0;
}

__global__ void castKernel(void *out, cpu::DType outType, const void *in,
                           cpu::DType inType, int64_t n) {
  FRENZY_GRID_STRIDE(i, n) {
    double v = loadAs(in, inType, i);
    switch (outType) {
    case cpu::DType::F32: static_cast<float *>(out)[i] = float(v); break;
    case cpu::DType::I64: static_cast<int64_t *>(out)[i] = int64_t(v); break;
    case cpu::DType::I32: static_cast<int32_t *>(out)[i] = int32_t(v); break;
    case cpu::DType::Bool: static_cast<uint8_t *>(out)[i] = v != 0; break;
    }
  }
}

template <typename O, typename I>
__global__ void castFloatKernel(O *out, const I *in, int64_t n) {
  FRENZY_GRID_STRIDE(i, n) out[i] = fromF<O>(toF(in[i]));
}

__global__ void scaleKernel(float *x, int64_t n, const float *scale) {
  const float s = *scale;
  FRENZY_GRID_STRIDE(i, n) x[i] *= s;
}

__global__ void unscaleKernel(float *g, int64_t n, const float *lossScale,
                              int *foundInf) {
  const float inv = 1.0f / *lossScale;
  bool bad = false;
  FRENZY_GRID_STRIDE(i, n) {
    float v = g[i] * inv;
    g[i] = v;
    bad |= !isfinite(v);
  }
  if (bad)
    *foundInf = 1; // every writer writes 1: no race on the value
}

__global__ void updateScaleKernel(float *scale, int *good, const int *foundInf,
                                  float growth, float backoff, int interval) {
  if (*foundInf) {
    *scale *= backoff;
    *good = 0;
  } else if (++*good >= interval) {
    *scale *= growth;
    *good = 0;
  }
}

} // namespace

Status cast(cudaStream_t s, void *out, cpu::DType outType, const void *in,
            cpu::DType inType, int64_t n) {
  if (n <= 0)
    return {};
  if (outType == inType) {
    static const int bytes[] = {4, 8, 4, 1};
    return cudaStatus("cast", cudaMemcpyAsync(out, in, n * bytes[int(outType)],
                                              cudaMemcpyDeviceToDevice, s));
  }
  castKernel<<<blocksFor(n), kThreads, 0, s>>>(out, outType, in, inType, n);
  return launched("cast");
}

Status castFloat(cudaStream_t s, void *out, FloatType outType, const void *in,
                 FloatType inType, int64_t n) {
  if (n <= 0)
    return {};
  if (outType == inType)
    return cudaStatus("cast", cudaMemcpyAsync(out, in, n * floatBytes(inType),
                                              cudaMemcpyDeviceToDevice, s));
  withFloatType(outType, [&](auto o) {
    withFloatType(inType, [&](auto i) {
      using O = decltype(o);
      using I = decltype(i);
      castFloatKernel<O, I><<<blocksFor(n), kThreads, 0, s>>>(
          static_cast<O *>(out), static_cast<const I *>(in), n);
    });
  });
  return launched("cast");
}

Status scaleBy(cudaStream_t s, float *x, int64_t n, const float *scale) {
  if (n <= 0)
    return {};
  scaleKernel<<<blocksFor(n), kThreads, 0, s>>>(x, n, scale);
  return launched("scale");
}

Status unscaleAndCheck(cudaStream_t s, float *const *gradsHost,
                       const int64_t *sizesHost, int count,
                       const float *lossScale, int *foundInf) {
  for (int t = 0; t < count; ++t) {
    if (sizesHost[t] <= 0)
      continue;
    unscaleKernel<<<blocksFor(sizesHost[t]), kThreads, 0, s>>>(
        gradsHost[t], sizesHost[t], lossScale, foundInf);
    Status st = launched("loss-scale unscale");
    if (!st.ok())
      return st;
  }
  return {};
}

Status updateLossScale(cudaStream_t s, float *lossScale, int *goodSteps,
                       const int *foundInf, float growth, float backoff,
                       int interval) {
  updateScaleKernel<<<1, 1, 0, s>>>(lossScale, goodSteps, foundInf, growth,
                                    backoff, interval);
  return launched("loss-scale update");
}

} // namespace frenzy::cuda::kernels
