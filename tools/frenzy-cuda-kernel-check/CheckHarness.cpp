//===- CheckHarness.cpp - device buffers, errors, the result table --------===//
#include "CheckHarness.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace frenzy::kcheck {

namespace {
struct Row {
  std::string kernel, type, shape, note;
  double err, tol;
  bool pass;
};
std::vector<Row> rows;

[[noreturn]] void die(const std::string &what, cudaError_t e) {
  std::fprintf(stderr, "frenzy-cuda-kernel-check: %s: %s (%s)\n", what.c_str(),
               cudaGetErrorName(e), cudaGetErrorString(e));
  std::exit(1);
}
} // namespace

double toleranceOf(FloatType t) {
  return t == FloatType::F32 ? kTolF32 : t == FloatType::BF16 ? kTolBf16 : kTolF16;
}

const char *typeName(FloatType t) { return cuda::kernels::floatTypeName(t); }

Env &env() {
  static Env e;
  return e;
}

DevBuf::DevBuf(size_t n, int bytes) {
  size_t total = std::max<size_t>(n * bytes, 8);
  if (auto e = cudaMalloc(&ptr, total))
    die("cudaMalloc of " + std::to_string(total) + " bytes", e);
  cudaMemset(ptr, 0, total);
}
DevBuf::~DevBuf() { cudaFree(ptr); }
void DevBuf::upload(const void *host, size_t bytes) {
  if (auto e = cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice))
    die("upload", e);
}
void DevBuf::download(void *host, size_t bytes) const {
  if (auto e = cudaMemcpy(host, ptr, bytes, cudaMemcpyDeviceToHost))
    die("download (a kernel fault surfaces here)", e);
}

DevFloats::DevFloats(FloatType t, size_t n)
    : type(t), n(n), buf(n, cuda::kernels::floatBytes(t)) {}

DevFloats::DevFloats(FloatType t, const Floats &host)
    : DevFloats(t, host.size()) {
  if (t == FloatType::F32) {
    buf.upload(host.data(), host.size() * 4);
    return;
  }
  std::vector<uint16_t> bits(host.size());
  for (size_t i = 0; i < host.size(); ++i)
    bits[i] = t == FloatType::BF16 ? cuda::rng::floatToBf16Bits(host[i])
                                   : cuda::rng::floatToHalfBits(host[i]);
  buf.upload(bits.data(), bits.size() * 2);
}

Floats DevFloats::read() const {
  Floats out(n);
  if (type == FloatType::F32) {
    buf.download(out.data(), n * 4);
    return out;
  }
  std::vector<uint16_t> bits(n);
  buf.download(bits.data(), n * 2);
  for (size_t i = 0; i < n; ++i)
    out[i] = type == FloatType::BF16 ? cuda::rng::bf16BitsToFloat(bits[i])
                                     : cuda::rng::halfBitsToFloat(bits[i]);
  return out;
}

Floats uniform(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Floats v(n);
  for (float &x : v)
    x = d(gen);
  return v;
}

Floats rounded(const Floats &v, FloatType t) {
  if (t == FloatType::F32)
    return v;
  Floats r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = t == FloatType::BF16
               ? cuda::rng::bf16BitsToFloat(cuda::rng::floatToBf16Bits(v[i]))
               : cuda::rng::halfBitsToFloat(cuda::rng::floatToHalfBits(v[i]));
  return r;
}

double relError(const Floats &got, const Floats &ref) {
  if (got.size() != ref.size())
    return INFINITY;
  double maxDiff = 0, maxRef = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::fabs(double(got[i]) - double(ref[i]));
    if (std::isnan(got[i]) != std::isnan(ref[i]))
      return INFINITY;
    if (!std::isnan(d))
      maxDiff = std::max(maxDiff, d);
    if (std::isfinite(ref[i]))
      maxRef = std::max(maxRef, std::fabs(double(ref[i])));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

bool check(const std::string &kernel, FloatType t, const std::string &shape,
           const Floats &got, const Floats &ref, double tol) {
  double err = relError(got, ref);
  bool pass = err <= tol;
  rows.push_back({kernel, typeName(t), shape, "", err, tol, pass});
  return pass;
}

bool check(const std::string &kernel, FloatType t, const std::string &shape,
           const Floats &got, const Floats &ref) {
  return check(kernel, t, shape, got, ref, toleranceOf(t));
}

bool checkExact(const std::string &kernel, const std::string &shape,
                bool equal, const std::string &note) {
  rows.push_back({kernel, "exact", shape, note, equal ? 0.0 : 1.0, 0.0, equal});
  return equal;
}

bool ok(const Status &s, const std::string &kernel) {
  if (s.ok())
    return true;
  rows.push_back({kernel, "-", "-", s.message(), INFINITY, 0.0, false});
  return false;
}

void sync(const std::string &kernel) {
  if (auto e = cudaStreamSynchronize(env().stream))
    die("after " + kernel, e);
}

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

int printTable() {
  int failures = 0;
  std::printf("%-34s %-6s %-22s %-10s %-8s %s\n", "kernel", "type", "shape",
              "max err", "tol", "result");
  for (const Row &r : rows) {
    failures += !r.pass;
    std::printf("%-34s %-6s %-22s %-10.3g %-8.0e %s%s%s\n", r.kernel.c_str(),
                r.type.c_str(), r.shape.c_str(), r.err, r.tol,
                r.pass ? "PASS" : "FAIL", r.note.empty() ? "" : "  ",
                r.note.c_str());
  }
  std::printf("%zu comparisons, %d failed\n", rows.size(), failures);
  return failures;
}

} // namespace frenzy::kcheck
