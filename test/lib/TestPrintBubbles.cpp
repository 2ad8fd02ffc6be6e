//===- TestPrintBubbles.cpp - test pass printing the bubble analysis ------===//
//
// -frenzy-print-bubbles prints, for lit tests, every idle interval of every
// stage in one step of the module's recorded partition and schedule (start,
// duration, what ends it, micro-batches held, memory free, why), then per
// stage and in total (bubbles::print).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/SideTaskAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct TestPrintBubblesPass
    : PassWrapper<TestPrintBubblesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintBubblesPass)
  TestPrintBubblesPass() = default;
  TestPrintBubblesPass(const TestPrintBubblesPass &) {}
  StringRef getArgument() const final { return "frenzy-print-bubbles"; }
  StringRef getDescription() const final {
    return "Print the bubbles of the recorded schedule (test only)";
  }
  Option<std::string> cluster{
      *this, "cluster",
      llvm::cl::desc("The cluster file (default: the partition's)"),
      llvm::cl::init("")};

  void runOnOperation() override {
    auto mb = frenzy::analyzeModuleBubbles(getOperation(), cluster,
                                           "frenzy-print-bubbles");
    if (failed(mb))
      return signalPassFailure();
    frenzy::bubbles::print(mb->problem, mb->analysis, llvm::outs());
  }
};
} // namespace

namespace frenzy::test {
void registerBubblesTestPass() { PassRegistration<TestPrintBubblesPass>(); }
} // namespace frenzy::test
