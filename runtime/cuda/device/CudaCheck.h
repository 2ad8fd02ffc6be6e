//===- CudaCheck.h - CUDA and NCCL results as one-line errors -*- C++ -*-===//
//
// Check helpers that throw RuntimeError (never exit()): frenzy-launch turns
// it into "frenzy-launch: rank R ...: error: ...; ending all ranks" and
// MPI_Abort, so one failing rank ends the job instead of hanging it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDACHECK_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDACHECK_H

#include "Tensor.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace frenzy::rt::cuda {

inline void checkCuda(cudaError_t e, const char *what, const std::string &who) {
  if (e == cudaSuccess)
    return;
  (void)cudaGetLastError(); // clear a sticky-free error for the next call
  throw RuntimeError(who + ": " + what + ": " + cudaGetErrorName(e) + " (" +
                     cudaGetErrorString(e) + ")");
}

inline void checkNccl(ncclResult_t r, const char *what, const std::string &who) {
  if (r == ncclSuccess || r == ncclInProgress)
    return;
  throw RuntimeError(who + ": " + what + ": " + ncclGetErrorString(r) +
                     " (" + ncclGetLastError(nullptr) + ")");
}

} // namespace frenzy::rt::cuda

#define FRENZY_CUDA_CHECK(expr, who) ::frenzy::rt::cuda::checkCuda((expr), #expr, (who))
#define FRENZY_NCCL_CHECK(expr, who) ::frenzy::rt::cuda::checkNccl((expr), #expr, (who))

#endif
