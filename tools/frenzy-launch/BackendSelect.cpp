//===- BackendSelect.cpp - CPU or CUDA backend for a rank of frenzy-launch ===//
//
// The choice itself is host/Backend.h's (unit-tested); this file asks the
// CUDA runtime what the machine has, when this binary was built with the
// CUDA backend (FRENZY_HAVE_CUDA_BACKEND), and says nothing of CUDA
// otherwise.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "LaunchOptions.h"
#include "PrecisionPlan.h"
#include "Tensor.h"

#ifdef FRENZY_HAVE_CUDA_BACKEND
#include "DeviceContext.h"
#endif

using namespace frenzy;
using namespace frenzy::rt;

bool frenzy::rt::haveCudaBackend() {
#ifdef FRENZY_HAVE_CUDA_BACKEND
  return true;
#else
  return false;
#endif
}

int frenzy::rt::selectBackend(const Options &o, const plan::Plan &p,
                              int rank) {
  std::string gpuType;
  if (rank < p.ranks_size())
    gpuType = p.ranks(rank).gpu_type();
  else if (p.devices_size())
    gpuType = p.devices(0).gpu_type();
  cuda::CudaAvailability a;
#ifdef FRENZY_HAVE_CUDA_BACKEND
  // Only probe when the answer can matter: the probe loads the driver.
  if (o.backend == "cuda" || (o.backend.empty() && gpuType != "cpu"))
    a = cuda::probeCuda();
  else
    a.built = true;
#endif
  cuda::Backend b = cuda::chooseBackend(o.backend, gpuType, a, rank);
  // Every rank reads the same plan, so an op the CUDA backend lacks is
  // refused here by all ranks alike, before any communicator is made.
  if (b == cuda::Backend::Cuda)
    cuda::requireCudaOps(p);
  return int(b);
}

#ifndef FRENZY_HAVE_CUDA_BACKEND
int frenzy::rt::runCudaSingleRank(const Options &, const plan::Plan &) {
  // selectBackend never picks CUDA in this build.
  throw RuntimeError("this frenzy-launch was built without the CUDA backend");
}
int frenzy::rt::runCudaRank(const Options &, const plan::Plan &, int) {
  throw RuntimeError("this frenzy-launch was built without the CUDA backend");
}
#endif
