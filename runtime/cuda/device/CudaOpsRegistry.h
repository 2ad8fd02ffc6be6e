//===- CudaOpsRegistry.h - the groups of CUDA op adapters -------*- C++ -*-===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPSREGISTRY_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPSREGISTRY_H

#include "CudaOps.h"

namespace frenzy::rt::cuda {

/// Ops.def's Elementwise and Movement groups.
void addElementwiseOps(CudaOpTable &t);
/// Ops.def's NN, Optimizer and Parallel groups.
void addNNOps(CudaOpTable &t);

/// A group file's Ops.def macro: the op's adapter into `t` when the CUDA
/// backend has it (Where is Both), nothing for a CpuOnly op, so that only
/// the ops the list promises on CUDA need an adapter to compile.
#define FRENZY_CUDA_FILL(Id, Name, Where, Kernel, ...)                         \
  FRENZY_CUDA_FILL_##Where(t[OpId::Id] = Kernel;)
#define FRENZY_CUDA_FILL_Both(...) __VA_ARGS__
#define FRENZY_CUDA_FILL_CpuOnly(...)

} // namespace frenzy::rt::cuda

#endif
