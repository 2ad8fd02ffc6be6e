//===- BackendSelect.cpp - CPU or CUDA backend for a rank of frenzy-launch ===//
//
// The choice itself is host/BackendChoice.h's (unit-tested); this file asks the
// CUDA runtime what the machine has, when this binary was built with the
// CUDA backend (FRENZY_HAVE_CUDA_BACKEND), and says nothing of CUDA
// otherwise.
//
//===----------------------------------------------------------------------===//
#include "BackendChoice.h"
#include "backend/CpuBackend.h"
#include "LaunchOptions.h"
#include "PrecisionPlan.h"
#include "Tensor.h"

#include <cstdio>

#ifdef FRENZY_HAVE_CUDA_BACKEND
#include "CudaBackend.h"
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

std::unique_ptr<Backend>
frenzy::rt::makeBackend(const Options &o, const plan::Plan &p, int rank,
                        int backend, std::vector<int32_t> order,
                        std::set<int32_t> freeLate, int32_t program) {
  if (backend != 1)
    return std::make_unique<CpuBackend>(p, std::move(order),
                                        std::move(freeLate), program, rank);
#ifdef FRENZY_HAVE_CUDA_BACKEND
  auto be = std::make_unique<cuda::CudaBackend>(
      p, rank, o.shareGpus, std::move(order), std::move(freeLate), program);
  if (!be->notes().empty())
    std::fputs(be->notes().c_str(), stdout);
  return be;
#else
  (void)o;
  // selectBackend never picks CUDA in this build; a guard, not a path.
  throw RuntimeError("rank " + std::to_string(rank) +
                     ": this frenzy-launch was built without the CUDA "
                     "backend");
#endif
}
