//===- CudaOpsRegistry.h - the groups of CUDA op adapters -------*- C++ -*-===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPSREGISTRY_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPSREGISTRY_H

#include "CudaOps.h"

namespace frenzy::rt::cuda {

void addElementwiseOps(std::unordered_map<std::string, CudaOp> &t);
void addNNOps(std::unordered_map<std::string, CudaOp> &t);

} // namespace frenzy::rt::cuda

#endif
