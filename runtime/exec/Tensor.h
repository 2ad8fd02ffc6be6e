//===- Tensor.h - a typed, shaped buffer of the runtime ---------*- C++ -*-===//
#ifndef FRENZY_RUNTIME_EXEC_TENSOR_H
#define FRENZY_RUNTIME_EXEC_TENSOR_H

#include "plan.pb.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace frenzy::rt {

/// Every runtime failure: one line for the user, caught by frenzy-launch.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `s` with control characters written as \xNN: names read from a damaged
/// file must not break an error message into several lines.
std::string printable(const std::string &s);

int elementBytes(plan::DType t);
const char *dtypeName(plan::DType t);

struct Tensor {
  plan::DType dtype = plan::F32;
  std::vector<int64_t> shape;
  std::string name;
  std::vector<uint64_t> storage; // 8-byte aligned

  int64_t numel() const;
  int64_t bytes() const { return numel() * elementBytes(dtype); }
  void allocate();
  void *data() { return storage.data(); }
  const void *data() const { return storage.data(); }
  float *f32() { return reinterpret_cast<float *>(storage.data()); }
  const float *f32() const {
    return reinterpret_cast<const float *>(storage.data());
  }
  int64_t *i64() { return reinterpret_cast<int64_t *>(storage.data()); }
  const int64_t *i64() const {
    return reinterpret_cast<const int64_t *>(storage.data());
  }
  uint8_t *u8() { return reinterpret_cast<uint8_t *>(storage.data()); }
  const uint8_t *u8() const {
    return reinterpret_cast<const uint8_t *>(storage.data());
  }
  std::string describe() const; // "f32[2,16,64]"
};

} // namespace frenzy::rt

#endif
