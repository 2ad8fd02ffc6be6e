//===- DeviceSelect.h - which GPU a rank uses, and the checks ---*- C++ -*-===//
//
// Pure decisions of the CUDA backend's device set-up, from what the CUDA
// runtime reported (GpuInfo) and the plan: the device of a rank is its
// plan device index on its node; the checks that refuse to start (no GPU,
// fewer GPUs than the plan puts on the node, another GPU type than the
// plan's, a GPU older than the kernels' sm_80) each give one line naming
// the rank and what to do.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_HOST_DEVICESELECT_H
#define FRENZY_RUNTIME_CUDA_HOST_DEVICESELECT_H

#include "plan.pb.h"

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::rt::cuda {

/// One GPU as cudaGetDeviceProperties describes it.
struct GpuInfo {
  std::string name;   // "NVIDIA H100 80GB HBM3"
  int64_t totalBytes = 0;
  int major = 0, minor = 0; // compute capability
  std::string busId;  // PCI bus id, "0000:1b:00.0"
};

/// The GPU catalogue name (GpuCatalogue.cpp) of a device, from its name
/// and memory; "" when it is none of them.
std::string catalogueType(const GpuInfo &g);

struct DeviceChoice {
  int device = 0;     // CUDA device index to use
  std::string notes;  // lines worth printing (shared GPU, unknown type)
};

/// Chooses rank `rank`'s device among `visible` (probeError: why none is
/// visible, when so). shareGpus: ranks whose device index is past the
/// visible GPUs use index mod count (tests on one GPU); otherwise that is
/// an error. Throws RuntimeError with one line.
DeviceChoice chooseDevice(const plan::Plan &plan, int rank,
                          const std::vector<GpuInfo> &visible,
                          const std::string &probeError, bool shareGpus);

} // namespace frenzy::rt::cuda

#endif
