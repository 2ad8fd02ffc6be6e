//===- CudaOps.cpp - the table of CUDA op adapters ------------------------===//
#include "CudaOps.h"
#include "CudaOpsRegistry.h"

using namespace frenzy::rt::cuda;

void DevOp::check(const k::Status &st) const {
  if (!st.ok())
    args.fail("CUDA: " + st.message());
}

const std::unordered_map<std::string, CudaOp> &frenzy::rt::cuda::cudaOps() {
  static const std::unordered_map<std::string, CudaOp> table = [] {
    std::unordered_map<std::string, CudaOp> t;
    addElementwiseOps(t);
    addNNOps(t);
    return t;
  }();
  return table;
}
