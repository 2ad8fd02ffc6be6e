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
  for (const auto &[name, typing] : opTypings())
    EXPECT_EQ(cudaOps().count(name), 1u) << name;
  for (const auto &[name, fn] : cudaOps())
    EXPECT_EQ(opTypings().count(name), 1u) << name;
  for (const auto &[name, fn] : kernelTable())
    EXPECT_EQ(cudaOps().count(name), 1u) << name;
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
