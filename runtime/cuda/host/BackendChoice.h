//===- BackendChoice.h - CPU or CUDA backend for a rank ---------*- C++ -*-===//
//
// frenzy-launch --backend=cpu|cuda, or by default: the CUDA backend when
// the rank's plan GPU type is a GPU, this binary has the CUDA backend and
// the CUDA driver shows at least one GPU; otherwise the CPU backend (so a
// plan made for GPUs still runs on a machine without one, as the tests
// here do). An explicit --backend=cuda that cannot be honoured is one
// error line naming the rank.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_HOST_BACKENDCHOICE_H
#define FRENZY_RUNTIME_CUDA_HOST_BACKENDCHOICE_H

#include <string>

namespace frenzy::rt::cuda {

enum class Backend { Cpu, Cuda };

/// What the process knows about CUDA on this machine.
struct CudaAvailability {
  bool built = false;     // this binary has the CUDA backend
  int gpus = 0;           // GPUs the driver shows
  std::string probeError; // why none, in words
};

/// `flag` is "", "cpu" or "cuda" (anything else throws). Throws
/// RuntimeError when --backend=cuda cannot run.
Backend chooseBackend(const std::string &flag, const std::string &gpuType,
                      const CudaAvailability &cuda, int rank);

const char *backendName(Backend b);

} // namespace frenzy::rt::cuda

#endif
