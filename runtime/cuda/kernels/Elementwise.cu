//===- Elementwise.cu - broadcasting elementwise kernels ------------------===//
//
// One grid-stride kernel per operand count; the op is a device lambda, so
// each kind gets its own instantiation (no switch per element). Same-shape
// operands take a flat path without index arithmetic (residual adds,
// activations). The formulas are the CPU's (runtime/cpu/Elementwise.cpp),
// including tanh as 1 - 2 / (1 + e^{2u}) in GELU, so the two backends
// differ only by the exp implementations' last bits.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

namespace frenzy::cuda::kernels {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kInvSqrt2 = 0.7071067811865476f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f;

__device__ __forceinline__ float tanhLikeCpu(float u) {
  return 1.0f - 2.0f / (1.0f + expf(2.0f * u));
}
__device__ __forceinline__ float sigmoidLikeCpu(float x) {
  return 1.0f / (1.0f + expf(-x));
}

template <cpu::UnaryKind K> __device__ __forceinline__ float applyUnary(float x) {
  using U = cpu::UnaryKind;
  if constexpr (K == U::Neg) return -x;
  else if constexpr (K == U::Abs) return fabsf(x);
  else if constexpr (K == U::Exp) return expf(x);
  else if constexpr (K == U::Log) return logf(x);
  else if constexpr (K == U::Sqrt) return sqrtf(x);
  else if constexpr (K == U::Reciprocal) return 1.0f / x;
  else if constexpr (K == U::Tanh) return tanhf(x);
  else if constexpr (K == U::Erf) return erff(x);
  else if constexpr (K == U::Sigmoid) return sigmoidLikeCpu(x);
  else if constexpr (K == U::Relu) return x > 0 ? x : 0.0f;
  else if constexpr (K == U::Sin) return sinf(x);
  else if constexpr (K == U::Cos) return cosf(x);
  else if constexpr (K == U::Silu) return x * sigmoidLikeCpu(x);
  else if constexpr (K == U::GeluTanh)
    return 0.5f * x * (1.0f + tanhLikeCpu(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  else
    return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
}

template <cpu::UnaryKind K> __device__ __forceinline__ float derivative(float x) {
  using U = cpu::UnaryKind;
  if constexpr (K == U::Silu) {
    float s = sigmoidLikeCpu(x);
    return s * (1.0f + x * (1.0f - s));
  } else if constexpr (K == U::GeluTanh) {
    float u = kSqrt2OverPi * (x + 0.044715f * x * x * x);
    float t = tanhLikeCpu(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
  } else if constexpr (K == U::GeluErf) {
    return 0.5f * (1.0f + erff(x * kInvSqrt2)) +
           x * kInvSqrt2Pi * expf(-0.5f * x * x);
  } else {
    return 0.0f;
  }
}

template <typename F> __global__ void flatKernel(int64_t n, F f) {
  FRENZY_GRID_STRIDE(i, n) f(i);
}

template <int Ops, typename F>
__global__ void broadcastKernel(int64_t n, BroadcastMap<Ops> m, F f) {
  FRENZY_GRID_STRIDE(i, n) {
    int64_t off[Ops];
    m.offsets(i, off);
    f(i, off);
  }
}

template <typename F> Status runFlat(cudaStream_t s, int64_t n, F f,
                                     const char *name) {
  if (n <= 0)
    return {};
  flatKernel<<<blocksFor(n), kThreads, 0, s>>>(n, f);
  return launched(name);
}

/// Runs f(i, offsets) over outShape with Ops broadcast operands.
template <int Ops, typename F>
Status runBroadcast(cudaStream_t s, const Shape &outShape,
                    const Shape *const shapes[Ops], F f, const char *name) {
  int64_t n = cpu::numElements(outShape);
  if (n <= 0)
    return {};
  BroadcastMap<Ops> m;
  if (!makeBroadcastMap<Ops>(m, outShape, shapes))
    return rankTooHigh(name, outShape.size());
  broadcastKernel<Ops><<<blocksFor(n), kThreads, 0, s>>>(n, m, f);
  return launched(name);
}

template <typename T, cpu::UnaryKind K>
Status unaryTyped(cudaStream_t s, void *out, const void *in, int64_t n) {
  T *y = static_cast<T *>(out);
  const T *x = static_cast<const T *>(in);
  return runFlat(s, n, [=] __device__(int64_t i) {
    y[i] = fromF<T>(applyUnary<K>(toF(x[i])));
  }, "unary");
}

template <typename T, cpu::UnaryKind K>
Status unaryGradTyped(cudaStream_t s, void *din, const void *dout,
                      const void *xin, int64_t n) {
  T *dx = static_cast<T *>(din);
  const T *dy = static_cast<const T *>(dout), *x = static_cast<const T *>(xin);
  return runFlat(s, n, [=] __device__(int64_t i) {
    dx[i] = fromF<T>(toF(dy[i]) * derivative<K>(toF(x[i])));
  }, "activation_grad");
}

template <typename T> struct BinaryOps {
  template <cpu::BinaryKind K> __device__ static T apply(T x, T y) {
    using B = cpu::BinaryKind;
    if constexpr (K == B::Add) return T(x + y);
    else if constexpr (K == B::Sub) return T(x - y);
    else if constexpr (K == B::Mul) return T(x * y);
    else if constexpr (K == B::Div) {
      if constexpr (std::is_integral_v<T>) return y == 0 ? T(0) : T(x / y);
      else return x / y;
    } else if constexpr (K == B::Pow) {
      if constexpr (std::is_integral_v<T>) return T(pow(double(x), double(y)));
      else return powf(x, y);
    } else if constexpr (K == B::Max) return x < y ? y : x; // std::max
    else return y < x ? y : x;                               // std::min
  }
};

/// Storage S to compute type C and back: identity for int64 and f32.
template <typename C, typename S> __device__ __forceinline__ C load(S x) {
  if constexpr (std::is_same_v<C, S>) return x;
  else return toF(x);
}
template <typename S, typename C> __device__ __forceinline__ S store(C x) {
  if constexpr (std::is_same_v<C, S>) return x;
  else return fromF<S>(x);
}

template <typename S, typename C, cpu::BinaryKind K>
Status binaryTyped(cudaStream_t s, void *out, const Shape &outShape,
                   const void *a, const Shape &aShape, const void *b,
                   const Shape &bShape) {
  S *y = static_cast<S *>(out);
  const S *pa = static_cast<const S *>(a), *pb = static_cast<const S *>(b);
  if (aShape == outShape && bShape == outShape)
    return runFlat(s, cpu::numElements(outShape), [=] __device__(int64_t i) {
      y[i] = store<S>(BinaryOps<C>::template apply<K>(load<C>(pa[i]),
                                                      load<C>(pb[i])));
    }, "binary");
  const Shape *shapes[2] = {&aShape, &bShape};
  return runBroadcast<2>(s, outShape, shapes,
                         [=] __device__(int64_t i, const int64_t *o) {
    y[i] = store<S>(BinaryOps<C>::template apply<K>(load<C>(pa[o[0]]),
                                                    load<C>(pb[o[1]])));
  }, "binary");
}

/// Calls f(std::integral_constant<Kind, k>) for the runtime kind k.
template <typename F> Status withUnary(cpu::UnaryKind k, F &&f) {
  using U = cpu::UnaryKind;
#define FRENZY_U(x) case U::x: return f(std::integral_constant<U, U::x>{});
  switch (k) {
    FRENZY_U(Neg) FRENZY_U(Abs) FRENZY_U(Exp) FRENZY_U(Log) FRENZY_U(Sqrt)
    FRENZY_U(Reciprocal) FRENZY_U(Tanh) FRENZY_U(Erf) FRENZY_U(Sigmoid)
    FRENZY_U(Relu) FRENZY_U(Sin) FRENZY_U(Cos) FRENZY_U(Silu)
    FRENZY_U(GeluTanh) FRENZY_U(GeluErf)
  }
#undef FRENZY_U
  return Status::error("unary: unknown kind");
}

template <typename F> Status withBinary(cpu::BinaryKind k, F &&f) {
  using B = cpu::BinaryKind;
#define FRENZY_B(x) case B::x: return f(std::integral_constant<B, B::x>{});
  switch (k) {
    FRENZY_B(Add) FRENZY_B(Sub) FRENZY_B(Mul) FRENZY_B(Div) FRENZY_B(Pow)
    FRENZY_B(Max) FRENZY_B(Min)
  }
#undef FRENZY_B
  return Status::error("binary: unknown kind");
}

template <typename T, cpu::CompareKind K>
__device__ __forceinline__ uint8_t cmp(T x, T y) {
  using C = cpu::CompareKind;
  if constexpr (K == C::Equal) return x == y;
  else if constexpr (K == C::Less) return x < y;
  else if constexpr (K == C::LessEqual) return x <= y;
  else if constexpr (K == C::Greater) return x > y;
  else return x >= y;
}

template <typename T, cpu::CompareKind K>
Status compareTyped(cudaStream_t s, uint8_t *y, const Shape &outShape,
                    const void *a, const Shape &aShape, const void *b,
                    const Shape &bShape) {
  const T *pa = static_cast<const T *>(a), *pb = static_cast<const T *>(b);
  const Shape *shapes[2] = {&aShape, &bShape};
  return runBroadcast<2>(s, outShape, shapes,
                         [=] __device__(int64_t i, const int64_t *o) {
    y[i] = cmp<T, K>(pa[o[0]], pb[o[1]]);
  }, "compare");
}

template <typename T>
Status whereTyped(cudaStream_t s, void *out, const Shape &outShape,
                  const uint8_t *cond, const Shape &condShape, const void *a,
                  const Shape &aShape, const void *b, const Shape &bShape) {
  T *y = static_cast<T *>(out);
  const T *pa = static_cast<const T *>(a), *pb = static_cast<const T *>(b);
  const Shape *shapes[3] = {&condShape, &aShape, &bShape};
  return runBroadcast<3>(s, outShape, shapes,
                         [=] __device__(int64_t i, const int64_t *o) {
    y[i] = cond[o[0]] ? pa[o[1]] : pb[o[2]];
  }, "where");
}

template <typename T>
Status swigluTyped(cudaStream_t s, void *out, const void *gate, const void *up,
                   int64_t n) {
  T *y = static_cast<T *>(out);
  const T *g = static_cast<const T *>(gate), *u = static_cast<const T *>(up);
  return runFlat(s, n, [=] __device__(int64_t i) {
    // The CPU rounds silu(g) to f32 before the product; so do we.
    y[i] = fromF<T>(applyUnary<cpu::UnaryKind::Silu>(toF(g[i])) * toF(u[i]));
  }, "swiglu");
}

template <typename T>
Status dropoutTyped(cudaStream_t s, void *out, const void *in, int64_t n,
                    float ratio, uint64_t seed, uint64_t first) {
  const float keep = 1.0f / (1.0f - ratio);
  T *y = static_cast<T *>(out);
  const T *x = static_cast<const T *>(in);
  return runFlat(s, n, [=] __device__(int64_t i) {
    y[i] = rng::dropped(seed, first + uint64_t(i), ratio)
               ? fromF<T>(0.0f)
               : fromF<T>(toF(x[i]) * keep);
  }, "dropout");
}

} // namespace

Status unary(cudaStream_t s, cpu::UnaryKind k, FloatType t, void *out,
             const void *in, int64_t n) {
  Status st;
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    st = withUnary(k, [&](auto kc) {
      return unaryTyped<T, decltype(kc)::value>(s, out, in, n);
    });
  });
  return st;
}

Status unaryGrad(cudaStream_t s, cpu::UnaryKind k, FloatType t, void *din,
                 const void *dout, const void *x, int64_t n) {
  using U = cpu::UnaryKind;
  if (k != U::Silu && k != U::GeluTanh && k != U::GeluErf)
    return Status::error("activation_grad: only silu, gelu_tanh and gelu_erf "
                         "have a gradient kernel");
  Status st;
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    if (k == U::Silu) st = unaryGradTyped<T, U::Silu>(s, din, dout, x, n);
    else if (k == U::GeluTanh) st = unaryGradTyped<T, U::GeluTanh>(s, din, dout, x, n);
    else st = unaryGradTyped<T, U::GeluErf>(s, din, dout, x, n);
  });
  return st;
}

Status binary(cudaStream_t s, cpu::BinaryKind k, FloatType t, void *out,
              const Shape &outShape, const void *a, const Shape &aShape,
              const void *b, const Shape &bShape) {
  Status st;
  withFloatType(t, [&](auto tag) {
    using T = decltype(tag);
    st = withBinary(k, [&](auto kc) {
      return binaryTyped<T, float, decltype(kc)::value>(s, out, outShape, a,
                                                        aShape, b, bShape);
    });
  });
  return st;
}

Status binaryI64(cudaStream_t s, cpu::BinaryKind k, int64_t *out,
                 const Shape &outShape, const int64_t *a, const Shape &aShape,
                 const int64_t *b, const Shape &bShape) {
  return withBinary(k, [&](auto kc) {
    return binaryTyped<int64_t, int64_t, decltype(kc)::value>(
        s, out, outShape, a, aShape, b, bShape);
  });
}

Status compare(cudaStream_t s, cpu::CompareKind k, bool isF32, uint8_t *out,
               const Shape &outShape, const void *a, const Shape &aShape,
               const void *b, const Shape &bShape) {
  using C = cpu::CompareKind;
  auto run = [&](auto tag) -> Status {
    using T = decltype(tag);
    switch (k) {
    case C::Equal: return compareTyped<T, C::Equal>(s, out, outShape, a, aShape, b, bShape);
    case C::Less: return compareTyped<T, C::Less>(s, out, outShape, a, aShape, b, bShape);
    case C::LessEqual: return compareTyped<T, C::LessEqual>(s, out, outShape, a, aShape, b, bShape);
    case C::Greater: return compareTyped<T, C::Greater>(s, out, outShape, a, aShape, b, bShape);
    case C::GreaterEqual: return compareTyped<T, C::GreaterEqual>(s, out, outShape, a, aShape, b, bShape);
    }
    return Status::error("compare: unknown kind");
  };
  return isF32 ? run(float{}) : run(int64_t{});
}

Status logic(cudaStream_t s, cpu::LogicKind k, uint8_t *y,
             const Shape &outShape, const uint8_t *a, const Shape &aShape,
             const uint8_t *b, const Shape &bShape) {
  const Shape *shapes[2] = {&aShape, &bShape};
  bool isAnd = k == cpu::LogicKind::And;
  return runBroadcast<2>(s, outShape, shapes,
                         [=] __device__(int64_t i, const int64_t *o) {
    y[i] = isAnd ? (a[o[0]] && b[o[1]]) : (a[o[0]] || b[o[1]]);
  }, "logic");
}

Status logicalNot(cudaStream_t s, uint8_t *y, const uint8_t *x, int64_t n) {
  return runFlat(s, n, [=] __device__(int64_t i) { y[i] = !x[i]; }, "not");
}

Status where(cudaStream_t s, void *out, const Shape &outShape,
             const uint8_t *cond, const Shape &condShape, const void *a,
             const Shape &aShape, const void *b, const Shape &bShape,
             int elemBytes) {
  switch (elemBytes) {
  case 1: return whereTyped<uint8_t>(s, out, outShape, cond, condShape, a, aShape, b, bShape);
  case 2: return whereTyped<uint16_t>(s, out, outShape, cond, condShape, a, aShape, b, bShape);
  case 4: return whereTyped<uint32_t>(s, out, outShape, cond, condShape, a, aShape, b, bShape);
  case 8: return whereTyped<uint64_t>(s, out, outShape, cond, condShape, a, aShape, b, bShape);
  }
  return Status::error("where: elements of " + std::to_string(elemBytes) +
                       " bytes are not supported (1, 2, 4 or 8)");
}

Status swiglu(cudaStream_t s, FloatType t, void *out, const void *gate,
              const void *up, int64_t n) {
  switch (t) {
  case FloatType::F32: return swigluTyped<float>(s, out, gate, up, n);
  case FloatType::BF16: return swigluTyped<__nv_bfloat16>(s, out, gate, up, n);
  case FloatType::F16: return swigluTyped<__half>(s, out, gate, up, n);
  }
  return Status::error("swiglu: unknown type");
}

Status dropout(cudaStream_t s, FloatType t, void *out, const void *in,
               int64_t n, float ratio, uint64_t seed, uint64_t first) {
  if (ratio <= 0.0f) {
    if (out == in || n <= 0)
      return {};
    return cudaStatus("dropout", cudaMemcpyAsync(out, in, n * floatBytes(t),
                                                 cudaMemcpyDeviceToDevice, s));
  }
  switch (t) {
  case FloatType::F32: return dropoutTyped<float>(s, out, in, n, ratio, seed, first);
  case FloatType::BF16: return dropoutTyped<__nv_bfloat16>(s, out, in, n, ratio, seed, first);
  case FloatType::F16: return dropoutTyped<__half>(s, out, in, n, ratio, seed, first);
  }
  return Status::error("dropout: unknown type");
}

Status trilu(cudaStream_t s, void *out, const void *in, int64_t batch,
             int64_t rows, int64_t cols, bool upper, int64_t k, int elemBytes) {
  if (elemBytes != 1 && elemBytes != 2 && elemBytes != 4 && elemBytes != 8)
    return Status::error("trilu: unsupported element size");
  char *y = static_cast<char *>(out);
  const char *x = static_cast<const char *>(in);
  const int64_t n = batch * rows * cols;
  return runFlat(s, n, [=] __device__(int64_t e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j >= i + k : j <= i + k;
    for (int b = 0; b < elemBytes; ++b)
      y[e * elemBytes + b] = keep ? x[e * elemBytes + b] : char(0);
  }, "trilu");
}

} // namespace frenzy::cuda::kernels
