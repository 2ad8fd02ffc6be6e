//===- CpuBackend.cpp - the Backend of CPU ranks --------------------------===//
#include "CpuBackend.h"

#include "plan/DeviceWorkspace.h"

#include <cmath>
#include <cstring>

namespace frenzy::rt {

CpuBackend::CpuBackend(const plan::Plan &plan, std::vector<int32_t> instrs,
                       std::set<int32_t> freeLate, int32_t program, int rank)
    : ex(std::make_unique<Executor>(plan, std::move(instrs),
                                    std::move(freeLate), program)),
      rank(rank) {}

std::string CpuBackend::who() const {
  return "rank " + std::to_string(rank) + " (cpu)";
}

void *CpuBackend::data(int32_t id) {
  Tensor &t = ex->tensor(id);
  if (t.storage.empty() && t.numel() > 0)
    ex->allocate(id);
  return t.data();
}

double CpuBackend::loss(int64_t) {
  return ex->tensor(ex->lossTensorId()).f32()[0];
}

void CpuBackend::setScalar(int32_t id, float value) {
  ex->allocate(id);
  ex->tensor(id).f32()[0] = value;
}

void CpuBackend::keepGradient(int32_t g) {
  std::vector<uint64_t> &acc = accum[g];
  if (ex->isPersistent(g)) // a program output (no optimizer): a copy
    acc = ex->tensor(g).storage;
  else
    ex->detach(g, acc);
}

void CpuBackend::addGradient(int32_t g) {
  const Tensor &t = ex->tensor(g);
  float *a = reinterpret_cast<float *>(accum[g].data());
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    a[i] += t.f32()[i];
  ex->release(g); // no-op for a program output
}

void CpuBackend::restoreGradient(int32_t g, float factor) {
  std::vector<uint64_t> &acc = accum[g];
  float *a = reinterpret_cast<float *>(acc.data());
  for (int64_t i = 0, n = ex->tensor(g).numel(); i < n && !acc.empty(); ++i)
    a[i] *= factor;
  if (ex->isPersistent(g)) {
    if (!acc.empty())
      ex->tensor(g).storage = acc;
    acc.clear();
  } else {
    ex->restore(g, acc);
  }
}

float *CpuBackend::pieceBuffer(size_t slot, int64_t n) {
  if (bufs.size() <= slot)
    bufs.resize(slot + 1);
  if (int64_t(bufs[slot].size()) < n)
    bufs[slot].resize(size_t(n));
  return bufs[slot].data();
}

void CpuBackend::copyPiece(const plan::Piece &pc, int32_t g, float *buf,
                           bool intoAcc) {
  const Tensor &t = ex->tensor(g);
  float *acc = reinterpret_cast<float *>(accum[g].data());
  int64_t n = t.numel() / pc.count();
  if (pc.count() == 1)
    std::memcpy(intoAcc ? acc : buf, intoAcc ? buf : acc, size_t(n) * 4);
  else
    copySlice(t.shape, 4, pc.dim(), pc.blocks(), pc.index(), pc.count(),
              reinterpret_cast<uint8_t *>(acc),
              reinterpret_cast<uint8_t *>(buf), intoAcc);
}

double CpuBackend::sumOfSquares(const std::vector<int32_t> &ids) {
  double s = 0;
  for (int32_t g : ids) {
    const Tensor &t = ex->tensor(g);
    for (int64_t i = 0, n = t.numel(); i < n; ++i)
      s += double(t.f32()[i]) * t.f32()[i];
  }
  return s;
}

int64_t CpuBackend::comparablePrediction(const plan::Rank &r) const {
  // The CPU backend has no CUDA context and no cuBLASLt workspace: compare
  // with the prediction without them (a GPU type's prediction counts both,
  // GpuType::workspaceBytes; the "cpu" type's neither).
  int64_t cudaOnly = r.context_bytes() + (r.gpu_type() != "cpu"
                                              ? plan::kCudaGemmWorkspaceBytes
                                              : 0);
  return r.predicted_peak_bytes() - cudaOnly;
}

std::string CpuBackend::memorySummary(int64_t) {
  char line[256];
  std::snprintf(line, sizeof line,
                "peak %lld bytes (%.2f MiB) = persistent %lld (parameters, "
                "optimizer state, inputs, outputs) + activations and "
                "workspace %lld",
                (long long)ex->peakBytes(), double(ex->peakBytes()) / (1 << 20),
                (long long)ex->persistentBytes(),
                (long long)ex->activationPeakBytes());
  return line;
}

} // namespace frenzy::rt
