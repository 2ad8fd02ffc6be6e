//===- ConstantTensor.cpp - host evaluation of shape-computing ONNX ops ---===//
#include "ConstantTensor.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace frenzy::import {
using onnx::TensorProto;

bool isFloatType(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE ||
         t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

bool ConstantTensor::isFloat() const { return isFloatType(dtype); }

bool ConstantTensor::holdsAllValues() const {
  int64_t n = numElements();
  if (!splat && n > kMaxDenseFoldElements)
    return false;
  size_t need = splat ? 1 : size_t(n);
  return isFloat() ? floats.size() == need : ints.size() == need;
}

int64_t ConstantTensor::numElements() const {
  // Saturating: a folded shape can be anything a file says; a huge count
  // only makes the value too large to fold, never wraps around.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d))
      return INT64_MAX;
    n *= d;
  }
  return n;
}

std::optional<std::vector<int64_t>> ConstantTensor::toInts() const {
  int64_t n = numElements();
  if (n > kMaxDenseFoldElements || !holdsAllValues())
    return std::nullopt;
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = isFloat() ? saturatingInt(floatAt(i)) : intAt(i);
  return out;
}

std::optional<double> ConstantTensor::firstValue() const {
  if (numElements() < 1 || !holdsAllValues())
    return std::nullopt;
  return valueAt(0);
}

int64_t saturatingInt(double v) {
  if (std::isnan(v))
    return 0;
  // 2^63 is exact as a double; every double below it converts.
  if (v >= 9223372036854775808.0)
    return INT64_MAX;
  if (v < -9223372036854775808.0)
    return INT64_MIN;
  return int64_t(v);
}

int64_t wrappingAdd(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
int64_t wrappingSub(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
int64_t wrappingMul(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}
int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

ConstantTensor ConstantTensor::scalarInt(int64_t v, int32_t dtype) {
  ConstantTensor c;
  c.dtype = dtype;
  c.ints = {v};
  return c;
}

ConstantTensor ConstantTensor::vectorInts(std::vector<int64_t> v) {
  ConstantTensor c;
  c.dtype = TensorProto::INT64;
  c.shape = {(int64_t)v.size()};
  c.ints = std::move(v);
  return c;
}

namespace {
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { // subnormal: renormalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
} // namespace

std::optional<ConstantTensor> readTensorProto(const TensorProto &t) {
  if (t.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  ConstantTensor c;
  c.dtype = t.data_type();
  c.shape.assign(t.dims().begin(), t.dims().end());
  int64_t n = c.numElements();
  const std::string &raw = t.raw_data();
  bool hasRaw = t.has_raw_data();
  auto fromRaw = [&](size_t width, auto convert) -> bool {
    if (raw.size() != size_t(n) * width)
      return false;
    for (int64_t i = 0; i < n; ++i)
      convert(raw.data() + i * width);
    return true;
  };
  switch (c.dtype) {
  case TensorProto::FLOAT:
    if (hasRaw)
      return fromRaw(4, [&](const char *p) {
               float f;
               std::memcpy(&f, p, 4);
               c.floats.push_back(f);
             }) ? std::optional(c) : std::nullopt;
    c.floats.assign(t.float_data().begin(), t.float_data().end());
    break;
  case TensorProto::DOUBLE:
    if (hasRaw)
      return fromRaw(8, [&](const char *p) {
               double d;
               std::memcpy(&d, p, 8);
               c.floats.push_back(d);
             }) ? std::optional(c) : std::nullopt;
    c.floats.assign(t.double_data().begin(), t.double_data().end());
    break;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: {
    bool bf = c.dtype == TensorProto::BFLOAT16;
    auto half = [&](uint16_t h) {
      if (!bf)
        return halfToFloat(h);
      uint32_t bits = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    };
    if (hasRaw)
      return fromRaw(2, [&](const char *p) {
               uint16_t h;
               std::memcpy(&h, p, 2);
               c.floats.push_back(half(h));
             }) ? std::optional(c) : std::nullopt;
    for (int32_t v : t.int32_data())
      c.floats.push_back(half(uint16_t(v)));
    break;
  }
  case TensorProto::INT64:
    if (hasRaw)
      return fromRaw(8, [&](const char *p) {
               int64_t v;
               std::memcpy(&v, p, 8);
               c.ints.push_back(v);
             }) ? std::optional(c) : std::nullopt;
    c.ints.assign(t.int64_data().begin(), t.int64_data().end());
    break;
  case TensorProto::INT32:
    if (hasRaw)
      return fromRaw(4, [&](const char *p) {
               int32_t v;
               std::memcpy(&v, p, 4);
               c.ints.push_back(v);
             }) ? std::optional(c) : std::nullopt;
    c.ints.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case TensorProto::BOOL:
  case TensorProto::UINT8:
  case TensorProto::INT8:
    if (hasRaw)
      return fromRaw(1, [&](const char *p) {
               c.ints.push_back(c.dtype == TensorProto::INT8 ? int64_t(int8_t(*p))
                                                             : int64_t(uint8_t(*p)));
             }) ? std::optional(c) : std::nullopt;
    c.ints.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  default:
    return std::nullopt;
  }
  if ((int64_t)(c.isFloat() ? c.floats.size() : c.ints.size()) != n)
    return std::nullopt;
  return c;
}

void writeTensorProto(const ConstantTensor &c, const std::string &name,
                      TensorProto &out) {
  out.Clear();
  out.set_name(name);
  out.set_data_type(c.dtype);
  for (int64_t d : c.shape)
    out.add_dims(d);
  int64_t n = c.numElements();
  for (int64_t i = 0; i < n; ++i) {
    switch (c.dtype) {
    case TensorProto::FLOAT:
      out.add_float_data(float(c.floatAt(i)));
      break;
    case TensorProto::DOUBLE:
      out.add_double_data(c.floatAt(i));
      break;
    case TensorProto::INT64:
      out.add_int64_data(c.intAt(i));
      break;
    case TensorProto::INT32:
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::UINT8:
      out.add_int32_data(int32_t(c.intAt(i)));
      break;
    default: // f16/bf16 shape-side constants do not occur; store as float.
      out.set_data_type(TensorProto::FLOAT);
      out.add_float_data(float(c.floatAt(i)));
    }
  }
}
} // namespace frenzy::import
