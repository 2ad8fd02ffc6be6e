//===- Elementwise.cpp - broadcasting elementwise kernels -----------------===//
//
// Binary kernels walk the output row by row with broadcast strides
// (Broadcast.h). Same-shape operands coalesce into one flat row (residual
// adds), a bias or scalar into rows against a constant, so the common cases
// in a transformer run as plain vectorisable loops.
//
//===----------------------------------------------------------------------===//
#include "Broadcast.h"
#include "VecMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace frenzy::cpu {

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace detail {
std::vector<int64_t> broadcastStrides(const Shape &in, const Shape &out) {
  std::vector<int64_t> s(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t d = in.size() - 1 - i, o = out.size() - 1 - i;
    s[o] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return s;
}

std::vector<int64_t> contiguousStrides(const Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}
} // namespace detail

namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kInvSqrt2 = 0.7071067811865476f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f;

float applyUnary(UnaryKind k, float x) {
  switch (k) {
  case UnaryKind::Neg: return -x;
  case UnaryKind::Abs: return std::fabs(x);
  case UnaryKind::Exp: return fastExp(x);
  case UnaryKind::Log: return std::log(x);
  case UnaryKind::Sqrt: return std::sqrt(x);
  case UnaryKind::Reciprocal: return 1.0f / x;
  case UnaryKind::Tanh: return std::tanh(x);
  case UnaryKind::Erf: return std::erf(x);
  case UnaryKind::Sigmoid: return fastSigmoid(x);
  case UnaryKind::Relu: return x > 0 ? x : 0.0f;
  case UnaryKind::Sin: return std::sin(x);
  case UnaryKind::Cos: return std::cos(x);
  case UnaryKind::Silu: return x * fastSigmoid(x);
  case UnaryKind::GeluTanh:
    return 0.5f * x *
           (1.0f + fastTanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  case UnaryKind::GeluErf: return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2));
  }
  return x;
}

float unaryDerivative(UnaryKind k, float x) {
  switch (k) {
  case UnaryKind::Silu: {
    float s = fastSigmoid(x);
    return s * (1.0f + x * (1.0f - s));
  }
  case UnaryKind::GeluTanh: {
    float u = kSqrt2OverPi * (x + 0.044715f * x * x * x);
    float t = fastTanh(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
  }
  case UnaryKind::GeluErf:
    return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) +
           x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
  default:
    return 0.0f;
  }
}

/// out[i] = f(a[ia], b[ib]) over the broadcast of two operands. Rows where
/// both operands are contiguous or one is constant (same shapes, a bias
/// along the last dim, a scalar) get loops the compiler vectorises.
template <typename O, typename T, typename F>
void broadcast2(O *out, const Shape &outShape, const T *a, const Shape &aShape,
                const T *b, const Shape &bShape, F f) {
  std::vector<int64_t> strides[2] = {
      detail::broadcastStrides(aShape, outShape),
      detail::broadcastStrides(bShape, outShape)};
  detail::forEachRow(outShape, strides, [&](int64_t pos, const int64_t *off,
                                            const int64_t *step, int64_t len) {
    O *y = out + pos;
    const T *x = a + off[0], *z = b + off[1];
    const int64_t sx = step[0], sz = step[1];
    if (sx == 1 && sz == 1) {
      for (int64_t j = 0; j < len; ++j)
        y[j] = f(x[j], z[j]);
    } else if (sx == 1 && sz == 0) {
      const T c = *z;
      for (int64_t j = 0; j < len; ++j)
        y[j] = f(x[j], c);
    } else if (sx == 0 && sz == 1) {
      const T c = *x;
      for (int64_t j = 0; j < len; ++j)
        y[j] = f(c, z[j]);
    } else {
      for (int64_t j = 0; j < len; ++j)
        y[j] = f(x[j * sx], z[j * sz]);
    }
  });
}

/// Calls run(op) with the operator of `kind` as a lambda, so each kind gets
/// its own instantiation of the loops above instead of a switch per element.
template <typename T, typename R> void withBinaryOp(BinaryKind kind, R &&run) {
  switch (kind) {
  case BinaryKind::Add: return run([](T x, T y) { return T(x + y); });
  case BinaryKind::Sub: return run([](T x, T y) { return T(x - y); });
  case BinaryKind::Mul: return run([](T x, T y) { return T(x * y); });
  case BinaryKind::Div:
    if constexpr (std::is_integral_v<T>)
      // Integer division by zero would trap the whole process; numpy gives 0.
      return run([](T x, T y) { return y == 0 ? T(0) : T(x / y); });
    else
      return run([](T x, T y) { return x / y; });
  case BinaryKind::Pow:
    if constexpr (std::is_integral_v<T>)
      return run([](T x, T y) { return T(std::pow(double(x), double(y))); });
    else
      return run([](T x, T y) { return T(std::pow(x, y)); });
  case BinaryKind::Max: return run([](T x, T y) { return std::max(x, y); });
  case BinaryKind::Min: return run([](T x, T y) { return std::min(x, y); });
  }
}

template <typename T, typename R>
void withCompareOp(CompareKind kind, R &&run) {
  switch (kind) {
  case CompareKind::Equal: return run([](T x, T y) { return uint8_t(x == y); });
  case CompareKind::Less: return run([](T x, T y) { return uint8_t(x < y); });
  case CompareKind::LessEqual:
    return run([](T x, T y) { return uint8_t(x <= y); });
  case CompareKind::Greater:
    return run([](T x, T y) { return uint8_t(x > y); });
  case CompareKind::GreaterEqual:
    return run([](T x, T y) { return uint8_t(x >= y); });
  }
}

} // namespace

namespace {
// One loop per kind, so the switch folds away and the loop body is the
// formula alone.
template <UnaryKind K> void unaryLoop(float *out, const float *in, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = applyUnary(K, in[i]);
}
template <UnaryKind K>
void unaryGradLoop(float *din, const float *dout, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    din[i] = dout[i] * unaryDerivative(K, x[i]);
}
} // namespace

void unaryF32(UnaryKind kind, float *out, const float *in, int64_t n) {
  using U = UnaryKind;
  switch (kind) {
  case U::Neg: return unaryLoop<U::Neg>(out, in, n);
  case U::Abs: return unaryLoop<U::Abs>(out, in, n);
  case U::Exp: return unaryLoop<U::Exp>(out, in, n);
  case U::Log: return unaryLoop<U::Log>(out, in, n);
  case U::Sqrt: return unaryLoop<U::Sqrt>(out, in, n);
  case U::Reciprocal: return unaryLoop<U::Reciprocal>(out, in, n);
  case U::Tanh: return unaryLoop<U::Tanh>(out, in, n);
  case U::Erf: return unaryLoop<U::Erf>(out, in, n);
  case U::Sigmoid: return unaryLoop<U::Sigmoid>(out, in, n);
  case U::Relu: return unaryLoop<U::Relu>(out, in, n);
  case U::Sin: return unaryLoop<U::Sin>(out, in, n);
  case U::Cos: return unaryLoop<U::Cos>(out, in, n);
  case U::Silu: return unaryLoop<U::Silu>(out, in, n);
  case U::GeluTanh: return unaryLoop<U::GeluTanh>(out, in, n);
  case U::GeluErf: return unaryLoop<U::GeluErf>(out, in, n);
  }
}

void unaryGradF32(UnaryKind kind, float *din, const float *dout,
                  const float *x, int64_t n) {
  using U = UnaryKind;
  switch (kind) {
  case U::Silu: return unaryGradLoop<U::Silu>(din, dout, x, n);
  case U::GeluTanh: return unaryGradLoop<U::GeluTanh>(din, dout, x, n);
  case U::GeluErf: return unaryGradLoop<U::GeluErf>(din, dout, x, n);
  default:
    for (int64_t i = 0; i < n; ++i)
      din[i] = 0.0f; // only fused activations have a gradient kernel
  }
}

void binaryF32(BinaryKind kind, float *out, const Shape &outShape,
               const float *a, const Shape &aShape, const float *b,
               const Shape &bShape) {
  withBinaryOp<float>(kind, [&](auto op) {
    broadcast2(out, outShape, a, aShape, b, bShape, op);
  });
}

void binaryI64(BinaryKind kind, int64_t *out, const Shape &outShape,
               const int64_t *a, const Shape &aShape, const int64_t *b,
               const Shape &bShape) {
  withBinaryOp<int64_t>(kind, [&](auto op) {
    broadcast2(out, outShape, a, aShape, b, bShape, op);
  });
}

void compareF32(CompareKind kind, uint8_t *out, const Shape &outShape,
                const float *a, const Shape &aShape, const float *b,
                const Shape &bShape) {
  withCompareOp<float>(kind, [&](auto op) {
    broadcast2(out, outShape, a, aShape, b, bShape, op);
  });
}

void compareI64(CompareKind kind, uint8_t *out, const Shape &outShape,
                const int64_t *a, const Shape &aShape, const int64_t *b,
                const Shape &bShape) {
  withCompareOp<int64_t>(kind, [&](auto op) {
    broadcast2(out, outShape, a, aShape, b, bShape, op);
  });
}

void logicU8(LogicKind kind, uint8_t *out, const Shape &outShape,
             const uint8_t *a, const Shape &aShape, const uint8_t *b,
             const Shape &bShape) {
  // Any nonzero byte is true, so normalise rather than combine bits.
  if (kind == LogicKind::And)
    broadcast2(out, outShape, a, aShape, b, bShape,
               [](uint8_t x, uint8_t y) { return uint8_t(x && y); });
  else
    broadcast2(out, outShape, a, aShape, b, bShape,
               [](uint8_t x, uint8_t y) { return uint8_t(x || y); });
}

void notU8(uint8_t *out, const uint8_t *in, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = !in[i];
}

void where(void *out, const Shape &outShape, const uint8_t *cond,
           const Shape &condShape, const void *a, const Shape &aShape,
           const void *b, const Shape &bShape, int elemBytes) {
  std::vector<int64_t> strides[3] = {
      detail::broadcastStrides(condShape, outShape),
      detail::broadcastStrides(aShape, outShape),
      detail::broadcastStrides(bShape, outShape)};
  auto select = [&](auto tag) {
    using T = decltype(tag);
    auto *o = static_cast<T *>(out);
    auto *pa = static_cast<const T *>(a), *pb = static_cast<const T *>(b);
    detail::forEachBroadcast(outShape, strides,
                             [&](int64_t i, const int64_t *f) {
                               o[i] = cond[f[0]] ? pa[f[1]] : pb[f[2]];
                             });
  };
  if (detail::withElementType(elemBytes, select))
    return;
  auto *o = static_cast<char *>(out);
  auto *pa = static_cast<const char *>(a), *pb = static_cast<const char *>(b);
  detail::forEachBroadcast(outShape, strides, [&](int64_t i, const int64_t *f) {
    const char *src = cond[f[0]] ? pa + f[1] * elemBytes : pb + f[2] * elemBytes;
    std::memcpy(o + i * elemBytes, src, elemBytes);
  });
}

namespace {
double loadAs(const void *p, DType t, int64_t i) {
  switch (t) {
  case DType::F32: return static_cast<const float *>(p)[i];
  case DType::I64: return double(static_cast<const int64_t *>(p)[i]);
  case DType::I32: return static_cast<const int32_t *>(p)[i];
  case DType::Bool: return static_cast<const uint8_t *>(p)[i];
  }
  return 0;
}
} // namespace

void cast(void *out, DType outType, const void *in, DType inType, int64_t n) {
  if (outType == inType) {
    static const int bytes[] = {4, 8, 4, 1};
    std::memcpy(out, in, n * bytes[int(outType)]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    // int64 -> int64 paths never reach here; through double is exact for
    // the magnitudes models use (ids, positions, shapes).
    double v = loadAs(in, inType, i);
    switch (outType) {
    case DType::F32: static_cast<float *>(out)[i] = float(v); break;
    case DType::I64: static_cast<int64_t *>(out)[i] = int64_t(v); break;
    case DType::I32: static_cast<int32_t *>(out)[i] = int32_t(v); break;
    case DType::Bool: static_cast<uint8_t *>(out)[i] = v != 0; break;
    }
  }
}

void trilu(void *out, const void *in, int64_t batch, int64_t rows,
           int64_t cols, bool upper, int64_t k, int elemBytes) {
  auto *o = static_cast<char *>(out);
  auto *s = static_cast<const char *>(in);
  const int64_t rowBytes = cols * elemBytes;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i) {
      // Row i keeps one contiguous column range: j <= i + k (lower) or
      // j >= i + k (upper).
      int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      int64_t row = (b * rows + i) * rowBytes;
      std::memset(o + row, 0, lo * elemBytes);
      std::memcpy(o + row + lo * elemBytes, s + row + lo * elemBytes,
                  (hi - lo) * elemBytes);
      std::memset(o + row + hi * elemBytes, 0, (cols - hi) * elemBytes);
    }
}

} // namespace frenzy::cpu
