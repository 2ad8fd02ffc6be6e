//===- CudaOpsTest.cpp - the CUDA backend's tables, without a GPU ---------===//
//
// Built only with the CUDA backend; runs where no GPU is (nothing here
// launches a kernel).
//
//===----------------------------------------------------------------------===//
#include "CudaOps.h"
#include "DeviceContext.h"
#include "PrecisionPlan.h"

#include <gtest/gtest.h>

using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

TEST(CudaOps, AnAdapterForEveryTypedOpAndEveryCpuKernel) {
  // An adapter exactly for the ops Ops.def promises on CUDA: a CpuOnly op
  // is refused at plan load (PrecisionPlan), never reached here.
  for (OpId id : allOps()) {
    EXPECT_EQ(cudaOps()[id] != nullptr, opInfo(id).onCuda()) << opName(id);
    EXPECT_NE(kernelTable()[id], nullptr) << opName(id);
  }
}

TEST(CudaOps, ProbeSaysWhyThereIsNoGpu) {
  std::vector<GpuInfo> gpus;
  CudaAvailability a = probeCuda(&gpus);
  EXPECT_TRUE(a.built);
  EXPECT_EQ(size_t(a.gpus), gpus.size());
  if (a.gpus == 0) {
    EXPECT_FALSE(a.probeError.empty());
  }
  for (const GpuInfo &g : gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_GT(g.totalBytes, 0);
  }
}

} // namespace
