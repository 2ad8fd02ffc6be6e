//===- CheckHarness.h - GPU-vs-CPU kernel comparison harness ----*- C++ -*-===//
//
// Device buffers holding f32, bf16 or f16 data uploaded from and read back
// as floats, seeded random inputs, the error measure and the result table
// of frenzy-cuda-kernel-check. The error of a kernel is
//   max_i |gpu_i - cpu_i| / max_i |cpu_i|
// (relative to the tensor's scale, so an element that is 0 by cancellation
// does not turn 1e-9 of noise into an infinite relative error).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_CUDAKERNELCHECK_CHECKHARNESS_H
#define FRENZY_TOOLS_CUDAKERNELCHECK_CHECKHARNESS_H

#include "CounterRng.h"
#include "CudaKernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::kcheck {

using cuda::kernels::FloatType;
using cuda::kernels::Status;
using Floats = std::vector<float>;

/// Tolerances (docs/cuda.md, "Kernels"): f32 must match to 1e-5 of the
/// tensor's scale; bf16/f16 runs feed both sides the same rounded inputs,
/// so they differ by the rounding of results and intermediates.
constexpr double kTolF32 = 1e-5;
constexpr double kTolBf16 = 1e-2;
constexpr double kTolF16 = 2e-3;
double toleranceOf(FloatType t);

/// The stream, cuBLASLt handle and workspace every case uses.
struct Env {
  cudaStream_t stream = nullptr;
  cuda::kernels::BlasHandles blas;
};
Env &env();

/// A device allocation of n elements of `bytes` bytes, freed on scope exit.
class DevBuf {
public:
  DevBuf(size_t n, int bytes);
  ~DevBuf();
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  void *get() const { return ptr; }
  template <typename T> T *as() const { return static_cast<T *>(ptr); }
  void upload(const void *host, size_t bytes);
  void download(void *host, size_t bytes) const;
  void fill(const void *host, size_t n, int bytes); // same as upload
private:
  void *ptr = nullptr;
};

/// Floats stored on the device as FloatType t.
class DevFloats {
public:
  DevFloats(FloatType t, const Floats &host);
  DevFloats(FloatType t, size_t n); // zeroed
  void *get() const { return buf.get(); }
  float *f32() const { return buf.as<float>(); }
  Floats read() const; // back as floats
  size_t size() const { return n; }

private:
  FloatType type;
  size_t n;
  DevBuf buf;
};

template <typename T> void toDevice(DevBuf &b, const std::vector<T> &v) {
  b.upload(v.data(), v.size() * sizeof(T));
}
template <typename T> std::vector<T> fromDevice(const DevBuf &b, size_t n) {
  std::vector<T> v(n);
  b.download(v.data(), n * sizeof(T));
  return v;
}

/// n uniform floats in [lo, hi) from a fixed seed.
Floats uniform(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
/// v rounded to type t and back (bf16/f16 inputs for the CPU reference).
Floats rounded(const Floats &v, FloatType t);

double relError(const Floats &got, const Floats &ref);

/// Records one comparison in the table; returns whether it passed.
bool check(const std::string &kernel, FloatType t, const std::string &shape,
           const Floats &got, const Floats &ref, double tol);
bool check(const std::string &kernel, FloatType t, const std::string &shape,
           const Floats &got, const Floats &ref);
/// Records an exact (integer / bit) comparison.
bool checkExact(const std::string &kernel, const std::string &shape,
                bool equal, const std::string &note);
/// A kernel that returned an error, or a sync that failed.
bool ok(const Status &s, const std::string &kernel);
void sync(const std::string &kernel);

std::string shapeStr(const std::vector<int64_t> &s);
const char *typeName(FloatType t);

/// Prints the table; returns the number of failures.
int printTable();

// The cases, by group (KernelCheckBasic.cpp, KernelCheckNN.cpp).
void checkContractions();
void checkElementwise();
void checkMovementAndReduce();
void checkNorms();
void checkLossAndEmbedding();
void checkAttention();
void checkOptimizer();
/// --bench: timings at GPT-2 124M shapes (KernelBench.cpp).
void runBench();

} // namespace frenzy::kcheck

#endif
