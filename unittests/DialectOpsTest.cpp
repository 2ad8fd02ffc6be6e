//===- DialectOpsTest.cpp - the compiler's ops and the runtime's op list --===//
//
// The plan writer names an instruction by its frenzy op's mnemonic
// (lib/Plan/ProgramLowering.cpp), and the runtime knows the ops of
// runtime/exec/Ops.def. The two lists are kept by hand on either side of
// the plan format, so this test is where they meet: a new dialect op
// without a runtime kernel, or a runtime op no compiler op emits, fails
// here instead of in the first plan that uses it.
//
//===----------------------------------------------------------------------===//
#include "Ops.h"
#include "frenzy/InitAll.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;

namespace {

// Ops that become plan tensors (parameters, constants), not instructions.
const std::set<std::string> kNotInstructions = {"param", "constant"};

TEST(DialectOps, EveryInstructionOpIsInTheRuntimeListAndBack) {
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::set<std::string> compiled;
  for (RegisteredOperationName op : ctx.getRegisteredOperations()) {
    if (op.getDialectNamespace() != "frenzy")
      continue;
    std::string name = op.stripDialect().str();
    if (kNotInstructions.count(name))
      continue;
    compiled.insert(name);
    EXPECT_TRUE(frenzy::rt::opId(name).has_value())
        << "frenzy." << name << " has no entry in runtime/exec/Ops.def";
  }
  for (frenzy::rt::OpId id : frenzy::rt::allOps())
    EXPECT_EQ(compiled.count(frenzy::rt::opName(id)), 1u)
        << frenzy::rt::opName(id) << " (Ops.def) is no frenzy dialect op";
}

} // namespace
