//===- OpsTest.cpp - every op of Ops.def has what each table needs --------===//
//
// The build already refuses an op without a CPU adapter or a contract in
// the files that expand its group; this walk catches what the compiler
// cannot see: a group whose registration kernelTable() never calls, a name
// the lookup does not round-trip, a typing PrecisionPlan cannot use. It
// prints the ops the CUDA backend lacks (the list's CpuOnly ops) so a run
// of the suite shows them.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "KernelContracts.h"
#include "Ops.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

using namespace frenzy::rt;

namespace {

TEST(Ops, EveryOpHasACpuKernelAContractAndATyping) {
  std::string cpuOnly;
  for (OpId id : allOps()) {
    const OpInfo &op = opInfo(id);
    SCOPED_TRACE(op.name);
    EXPECT_NE(kernelTable()[id], nullptr);
    EXPECT_NE(kernelContracts()[id], nullptr);
    OpPrecision p = op.typing.precision;
    EXPECT_TRUE(p == OpPrecision::Compute || p == OpPrecision::Move ||
                p == OpPrecision::F32);
    EXPECT_TRUE(op.where == Backends::Both || op.where == Backends::CpuOnly);
    if (!op.onCuda())
      cpuOnly += std::string(cpuOnly.empty() ? "" : ", ") + op.name;
  }
  std::printf("ops the CUDA backend lacks: %s\n",
              cpuOnly.empty() ? "none" : cpuOnly.c_str());
}

TEST(Ops, NamesMapToIdsAndBack) {
  std::set<std::string> names;
  for (OpId id : allOps()) {
    std::optional<OpId> back = opId(opName(id));
    ASSERT_TRUE(back.has_value()) << opName(id);
    EXPECT_EQ(*back, id) << opName(id);
    names.insert(opName(id));
  }
  EXPECT_EQ(names.size(), kNumOps);
  EXPECT_FALSE(opId("fft").has_value());
  EXPECT_FALSE(opId("").has_value());
  EXPECT_FALSE(opId("Layer_Norm").has_value());
}

TEST(Ops, F32OperandsAreThoseOfTheList) {
  const OpTyping &ln = opInfo(OpId::LayerNorm).typing;
  EXPECT_FALSE(ln.keepsF32(0, false));
  EXPECT_TRUE(ln.keepsF32(1, false));
  EXPECT_TRUE(ln.keepsF32(2, false));
  EXPECT_FALSE(ln.keepsF32(0, true));
  const OpTyping &ce = opInfo(OpId::SoftmaxCrossEntropyLoss).typing;
  EXPECT_TRUE(ce.keepsF32(0, true));
  EXPECT_FALSE(ce.keepsF32(0, false));
  EXPECT_FALSE(ce.keepsF32(-1, false));
  EXPECT_FALSE(ce.keepsF32(40, true));
}

} // namespace
