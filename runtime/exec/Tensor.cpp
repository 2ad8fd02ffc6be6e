//===- Tensor.cpp - a typed, shaped buffer of the runtime -----------------===//
#include "Tensor.h"

#include <cstdio>

namespace frenzy::rt {

std::string printable(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  return out;
}

int elementBytes(plan::DType t) {
  switch (t) {
  case plan::F32:
  case plan::I32:
    return 4;
  case plan::I64:
    return 8;
  case plan::BOOL:
    return 1;
  case plan::F16:
  case plan::BF16:
    return 2;
  default:
    return 4;
  }
}

const char *dtypeName(plan::DType t) {
  switch (t) {
  case plan::F32:
    return "f32";
  case plan::I64:
    return "i64";
  case plan::I32:
    return "i32";
  case plan::BOOL:
    return "bool";
  case plan::F16:
    return "f16";
  case plan::BF16:
    return "bf16";
  default:
    return "?";
  }
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void Tensor::allocate() { storage.assign((bytes() + 7) / 8, 0); }

std::string Tensor::describe() const {
  std::string s = dtypeName(dtype);
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace frenzy::rt
