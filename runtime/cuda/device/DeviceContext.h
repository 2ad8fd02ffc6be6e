//===- DeviceContext.h - one rank's GPU: device, streams, memory -*- C++ -*-===//
//
// What a CUDA rank holds for the whole run: its device (chosen and checked
// by host/DeviceSelect), the caching allocator over cudaMalloc, one compute
// stream and the communication streams named by host/StreamOrder, CUDA
// events by id (the allocator's deferred frees and the cross-stream
// waits), and the cuBLASLt handle and workspace of the GEMMs.
//
// Waiting never blocks forever: synchronize() polls with a deadline and
// throws a line naming the rank (a peer that died leaves its NCCL partners
// waiting on the GPU; the caller aborts the communicators and the job).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_DEVICECONTEXT_H
#define FRENZY_RUNTIME_CUDA_DEVICE_DEVICECONTEXT_H

#include "BackendChoice.h"
#include "CachingAllocator.h"
#include "CudaKernels.h"
#include "DeviceSelect.h"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt::cuda {

/// How long a wait for the GPU or a peer may take: FRENZY_CUDA_TIMEOUT
/// seconds, 600 by default.
double cudaTimeoutSeconds();

/// What the CUDA runtime shows on this machine (never throws).
CudaAvailability probeCuda(std::vector<GpuInfo> *gpus = nullptr);

class DeviceContext {
public:
  /// Chooses and checks the device (DeviceSelect), makes it current and
  /// creates the compute stream, the allocator and the cuBLASLt handle.
  DeviceContext(const plan::Plan &plan, int rank, bool shareGpus);
  ~DeviceContext();
  DeviceContext(const DeviceContext &) = delete;
  DeviceContext &operator=(const DeviceContext &) = delete;

  int rank() const { return me; }
  const std::string &who() const { return whoText; }
  int device() const { return dev; }
  const GpuInfo &gpu() const { return info; }
  /// "host/0000:1b:00.0": equal for two ranks exactly when they share a
  /// GPU (what CommPlan's MPI fallback is decided on).
  const std::string &physicalId() const { return physId; }
  const std::string &notes() const { return noteText; }
  /// Device memory in use once the context and cuBLASLt are set up, before
  /// the allocator takes any (cudaMemGetInfo: other processes on the GPU
  /// count too).
  int64_t contextBytes() const { return context; }

  cudaStream_t compute() const { return streams.at("compute"); }
  /// The stream of that name, created on first use.
  cudaStream_t stream(const std::string &name);

  /// Records an event on `s`; its id for wait() and done().
  uint64_t record(cudaStream_t s);
  void wait(cudaStream_t s, uint64_t event);
  bool done(uint64_t event);
  /// Frees what the allocator holds back for completed events, and the
  /// events themselves.
  void reclaim();

  CachingAllocator &allocator() { return *alloc; }
  const frenzy::cuda::kernels::BlasHandles &blas() const { return handles; }

  /// Waits for every stream, polling until `timeoutSeconds`; throws on a
  /// device error or the deadline (`during` says what was waited for).
  void synchronize(double timeoutSeconds, const std::string &during);
  void synchronize(cudaStream_t s, double timeoutSeconds,
                   const std::string &during);

private:
  int me = 0, dev = 0;
  int64_t context = 0;
  std::string whoText, physId, noteText;
  GpuInfo info;
  std::map<std::string, cudaStream_t> streams;
  std::map<uint64_t, cudaEvent_t> events;
  std::vector<cudaEvent_t> spareEvents;
  uint64_t nextEvent = 1;
  std::unique_ptr<SegmentSource> segments;
  std::unique_ptr<CachingAllocator> alloc;
  frenzy::cuda::kernels::BlasHandles handles;
};

} // namespace frenzy::rt::cuda

#endif
