//===- CudaOps.cpp - the table of CUDA op adapters ------------------------===//
#include "CudaOps.h"
#include "CudaOpsRegistry.h"

using namespace frenzy::rt::cuda;

void DevOp::check(const k::Status &st) const {
  if (!st.ok())
    args.fail("CUDA: " + st.message());
}

const CudaOpTable &frenzy::rt::cuda::cudaOps() {
  static const CudaOpTable table = [] {
    CudaOpTable t;
    addElementwiseOps(t);
    addNNOps(t);
    return t;
  }();
  return table;
}
