//===- TestPrintCost.cpp - test pass printing each op's cost facts --------===//
//
// -frenzy-test-print-cost emits a remark per op with its CostOpInterface
// numbers, so lit tests can pin the flop and byte conventions down.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct TestPrintCostPass
    : PassWrapper<TestPrintCostPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintCostPass)
  StringRef getArgument() const final { return "frenzy-test-print-cost"; }
  StringRef getDescription() const final {
    return "Emit a remark with each op's flops and bytes (test only)";
  }
  void runOnOperation() override {
    getOperation().walk([](frenzy::CostOpInterface op) {
      op->emitRemark() << "flops " << op.getFlops() << ", read "
                       << op.getBytesRead() << " B, written "
                       << op.getBytesWritten() << " B";
    });
  }
};
} // namespace

namespace frenzy::test {
void registerMemoryTestPass();
void registerBubblesTestPass();
void registerTestPasses() {
  PassRegistration<TestPrintCostPass>();
  registerMemoryTestPass();
  registerBubblesTestPass();
}
} // namespace frenzy::test
