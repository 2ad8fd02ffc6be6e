//===- DeviceContext.cpp - one rank's GPU: device, streams, memory --------===//
#include "DeviceContext.h"

#include "CudaCheck.h"
#include "plan/DeviceWorkspace.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

/// cudaMalloc as the allocator's segment source. FRENZY_CUDA_MEMORY_LIMIT
/// (bytes) caps what it takes: ranks sharing a GPU (--share-gpus) each get
/// their part, and the out-of-memory path can be exercised on purpose.
struct CudaSegments : SegmentSource {
  int64_t limit = 0, used = 0;
  CudaSegments() {
    if (const char *v = std::getenv("FRENZY_CUDA_MEMORY_LIMIT"))
      limit = std::atoll(v);
  }
  uint64_t reserve(int64_t bytes) override {
    if (limit > 0 && used + bytes > limit)
      return 0;
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, size_t(bytes));
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError(); // not sticky: clear it and report no room
      return 0;
    }
    checkCuda(e, "cudaMalloc", "device allocator");
    used += bytes;
    return reinterpret_cast<uint64_t>(p);
  }
  void release(uint64_t address, int64_t bytes) override {
    (void)cudaFree(reinterpret_cast<void *>(address));
    used -= bytes;
  }
  int64_t freeBytes() const override {
    size_t freeB = 0, total = 0;
    if (cudaMemGetInfo(&freeB, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    return limit > 0 ? std::min<int64_t>(int64_t(freeB), limit - used)
                     : int64_t(freeB);
  }
};

} // namespace

double frenzy::rt::cuda::cudaTimeoutSeconds() {
  const char *v = std::getenv("FRENZY_CUDA_TIMEOUT");
  double s = v ? std::atof(v) : 0;
  return s > 0 ? s : 600;
}

CudaAvailability frenzy::rt::cuda::probeCuda(std::vector<GpuInfo> *gpus) {
  CudaAvailability a;
  a.built = true;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    a.probeError = std::string(cudaGetErrorName(e)) + ": " +
                   cudaGetErrorString(e);
    return a;
  }
  a.gpus = n;
  if (n == 0)
    a.probeError = "the CUDA driver shows no device";
  for (int i = 0; gpus && i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    char bus[32] = {0};
    (void)cudaDeviceGetPCIBusId(bus, sizeof bus, i);
    gpus->push_back({p.name, int64_t(p.totalGlobalMem), p.major, p.minor, bus});
  }
  return a;
}

DeviceContext::DeviceContext(const plan::Plan &plan, int rank, bool shareGpus)
    : me(rank) {
  std::vector<GpuInfo> gpus;
  CudaAvailability a = probeCuda(&gpus);
  DeviceChoice c = chooseDevice(plan, rank, gpus, a.probeError, shareGpus);
  dev = c.device;
  info = gpus[dev];
  noteText = c.notes;
  whoText = "rank " + std::to_string(rank) + " (GPU " + std::to_string(dev) +
            " " + info.name + ")";
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  physId = std::string(host) + "/" + info.busId;
  FRENZY_CUDA_CHECK(cudaSetDevice(dev), whoText);
  cudaStream_t s;
  FRENZY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                    whoText);
  streams["compute"] = s;
  int64_t predicted = 0;
  if (rank < plan.ranks_size())
    predicted = plan.ranks(rank).predicted_peak_bytes() -
                plan.ranks(rank).context_bytes();
  segments = std::make_unique<CudaSegments>();
  alloc = std::make_unique<CachingAllocator>(*segments, rank, predicted);
  if (cublasLtCreate(&handles.lt) != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(whoText + ": cublasLtCreate failed");
  size_t freeB = 0, total = 0;
  FRENZY_CUDA_CHECK(cudaFree(nullptr), whoText); // the context exists now
  FRENZY_CUDA_CHECK(cudaMemGetInfo(&freeB, &total), whoText);
  context = int64_t(total) - int64_t(freeB);
  // The plan's predicted peak counts this buffer (GpuType::workspaceBytes),
  // so its size has one definition shared with the compiler.
  handles.workspace = reinterpret_cast<void *>(alloc->allocate(
      plan::kCudaGemmWorkspaceBytes, 0, "the cuBLASLt workspace"));
  handles.workspaceBytes = size_t(plan::kCudaGemmWorkspaceBytes);
}

DeviceContext::~DeviceContext() {
  // Best effort: the process is ending; errors here have no one to tell.
  for (auto &[name, s] : streams)
    (void)cudaStreamSynchronize(s);
  if (handles.lt)
    cublasLtDestroy(handles.lt);
  alloc.reset();
  for (auto &[id, e] : events)
    (void)cudaEventDestroy(e);
  for (cudaEvent_t e : spareEvents)
    (void)cudaEventDestroy(e);
  for (auto &[name, s] : streams)
    (void)cudaStreamDestroy(s);
}

cudaStream_t DeviceContext::stream(const std::string &name) {
  auto it = streams.find(name);
  if (it != streams.end())
    return it->second;
  cudaStream_t s;
  FRENZY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                    whoText);
  streams[name] = s;
  return s;
}

uint64_t DeviceContext::record(cudaStream_t s) {
  cudaEvent_t e;
  if (!spareEvents.empty()) {
    e = spareEvents.back();
    spareEvents.pop_back();
  } else {
    FRENZY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                      whoText);
  }
  FRENZY_CUDA_CHECK(cudaEventRecord(e, s), whoText);
  uint64_t id = nextEvent++;
  events[id] = e;
  return id;
}

void DeviceContext::wait(cudaStream_t s, uint64_t event) {
  auto it = events.find(event);
  if (it == events.end())
    return; // already reclaimed: it completed
  FRENZY_CUDA_CHECK(cudaStreamWaitEvent(s, it->second, 0), whoText);
}

bool DeviceContext::done(uint64_t event) {
  auto it = events.find(event);
  if (it == events.end())
    return true;
  cudaError_t e = cudaEventQuery(it->second);
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  checkCuda(e, "cudaEventQuery", whoText);
  return true;
}

void DeviceContext::reclaim() {
  alloc->reclaim([this](uint64_t ev) { return done(ev); });
  for (auto it = events.begin(); it != events.end();) {
    if (cudaEventQuery(it->second) == cudaSuccess) {
      spareEvents.push_back(it->second);
      it = events.erase(it);
    } else {
      (void)cudaGetLastError();
      ++it;
    }
  }
}

void DeviceContext::synchronize(cudaStream_t s, double timeoutSeconds,
                                const std::string &during) {
  auto start = std::chrono::steady_clock::now();
  for (int spin = 0;; ++spin) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess)
      return;
    if (e != cudaErrorNotReady)
      checkCuda(e, ("waiting for " + during).c_str(), whoText);
    (void)cudaGetLastError();
    double waited = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    if (waited > timeoutSeconds)
      throw RuntimeError(whoText + ": " + during + " did not finish within " +
                         std::to_string(int(timeoutSeconds)) +
                         " s (a peer rank died or stopped, or a kernel "
                         "hangs); set FRENZY_CUDA_TIMEOUT to wait longer");
    if (spin > 100)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void DeviceContext::synchronize(double timeoutSeconds,
                                const std::string &during) {
  for (auto &[name, s] : streams)
    synchronize(s, timeoutSeconds, during + " (stream " + name + ")");
  reclaim();
}
