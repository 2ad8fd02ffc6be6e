//===- GpuCatalogue.h - GPU types Frenzy knows ------------------*- C++ -*-===//
//
// Memory, dense 16-bit tensor throughput and memory bandwidth of common
// training GPUs, each with its source (docs/gpus.md). Types not listed must
// be described fully in the cluster file.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_CLUSTER_GPUCATALOGUE_H
#define FRENZY_CLUSTER_GPUCATALOGUE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "plan/DeviceWorkspace.h"

#include <cstdint>
#include <memory>
#include <string>

namespace frenzy {

struct DeviceProfile;

struct GpuType {
  std::string name;          // catalogue key, e.g. "A100-80G"
  int64_t memoryBytes = 0;   // device memory
  double tensorTflops = 0;   // dense fp16/bf16 tensor-core TFLOPS, fp32 accumulate
  double memoryGBs = 0;      // memory bandwidth, GB/s
  bool bf16 = true;          // bf16 tensor cores (Ampere and later)
  /// Fixed memory the runtime cannot use for tensors: the CUDA context.
  int64_t contextBytes = 512ll << 20;
  std::string source;
  /// Buffers per communicator a rank is in (NCCL's); a CPU rank's MPI
  /// needs none worth counting.
  int64_t commBufferBytes = 256ll << 20;
  /// Fixed device buffers the runtime's backend allocates per rank besides
  /// tensors and the context (the CUDA backend's cuBLASLt workspace, which
  /// its allocator's high-water mark includes); part of the predicted peak
  /// but not of the plan's context_bytes. The CPU backend has none.
  int64_t workspaceBytes = plan::kCudaGemmWorkspaceBytes;
  /// Measured speeds (frenzy-calibrate) named by the cluster file's
  /// `profile:`; null: the datasheet figures and default efficiencies.
  std::shared_ptr<const DeviceProfile> profile;
  std::string profilePath;
};

/// All catalogue entries.
llvm::ArrayRef<GpuType> gpuCatalogue();
/// A catalogue entry by name (case-insensitive), or null.
const GpuType *findGpuType(llvm::StringRef name);
/// "V100-16G, V100-32G, ..." for error messages.
std::string gpuTypeNames();

} // namespace frenzy

#endif
