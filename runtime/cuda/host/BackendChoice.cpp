//===- BackendChoice.cpp - CPU or CUDA backend for a rank -----------------===//
#include "BackendChoice.h"

#include "Tensor.h"

using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

Backend frenzy::rt::cuda::chooseBackend(const std::string &flag,
                                        const std::string &gpuType,
                                        const CudaAvailability &cuda,
                                        int rank) {
  std::string who = "rank " + std::to_string(rank);
  if (flag == "cpu")
    return Backend::Cpu;
  if (flag == "cuda") {
    if (!cuda.built)
      throw RuntimeError(who +
                         ": --backend=cuda: this frenzy-launch was built "
                         "without the CUDA backend (configure with "
                         "-DFRENZY_CUDA=ON where the CUDA toolkit and NCCL "
                         "are installed); use --backend=cpu");
    if (cuda.gpus <= 0)
      throw RuntimeError(who + ": --backend=cuda: no CUDA GPU is visible" +
                         (cuda.probeError.empty()
                              ? std::string()
                              : " (" + cuda.probeError + ")") +
                         "; run on a GPU node or use --backend=cpu");
    return Backend::Cuda;
  }
  if (!flag.empty())
    throw RuntimeError("--backend=" + flag +
                       ": unknown backend; use --backend=cpu or "
                       "--backend=cuda");
  bool gpuRank = !gpuType.empty() && gpuType != "cpu";
  return gpuRank && cuda.built && cuda.gpus > 0 ? Backend::Cuda
                                                : Backend::Cpu;
}

const char *frenzy::rt::cuda::backendName(Backend b) {
  return b == Backend::Cuda ? "cuda" : "cpu";
}
