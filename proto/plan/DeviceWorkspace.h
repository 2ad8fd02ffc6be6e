//===- DeviceWorkspace.h - fixed per-rank CUDA buffers ---------*- C++ -*-===//
//
// Device memory the CUDA backend allocates once per rank besides tensors,
// defined here once for both sides: the runtime (DeviceContext.cpp)
// allocates it, and the compiler's memory model (GpuType::workspaceBytes,
// lib/Cluster/GpuCatalogue.cpp) adds it to every GPU rank's predicted peak.
// Header-only, so the runtime links no compiler library. The CPU backend
// has no such buffer; its catalogue entry counts none.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PROTO_PLAN_DEVICEWORKSPACE_H
#define FRENZY_PROTO_PLAN_DEVICEWORKSPACE_H

#include <cstdint>

namespace frenzy::plan {

/// The cuBLASLt workspace one rank's GEMMs share, taken from the caching
/// allocator before the first tensor and held for the whole run (so it is
/// part of the allocator's high-water mark). 32 MiB is NVIDIA's advice for
/// Hopper (cuBLAS documentation, "cublasSetWorkspace"); smaller workspaces
/// make cuBLASLt drop split-K and stream-K algorithms on large GEMMs.
constexpr int64_t kCudaGemmWorkspaceBytes = int64_t(32) << 20;

} // namespace frenzy::plan

#endif
