//===- TestPrintMemory.cpp - test pass printing the memory analysis -------===//
//
// -frenzy-test-print-memory prints, for lit tests: each op's result bytes,
// workspace and live activation bytes after it; bytes saved for backward
// per block; the model states; and the predicted peak.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Memory/MemoryAnalysis.h"
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct TestPrintMemoryPass
    : PassWrapper<TestPrintMemoryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintMemoryPass)
  TestPrintMemoryPass() = default;
  TestPrintMemoryPass(const TestPrintMemoryPass &) {}
  StringRef getArgument() const final { return "frenzy-test-print-memory"; }
  StringRef getDescription() const final {
    return "Print per-op and per-block memory of a training step (test only)";
  }
  Option<int64_t> tp{*this, "tp", llvm::cl::init(1)};
  Option<bool> sp{*this, "sp", llvm::cl::init(false)};
  Option<int64_t> dp{*this, "dp", llvm::cl::init(1)};
  Option<int> zero{*this, "zero", llvm::cl::init(0)};
  Option<std::string> recompute{*this, "recompute",
                                llvm::cl::init("selective")};
  Option<bool> masks{*this, "store-masks", llvm::cl::init(false)};
  Option<bool> executor{*this, "executor", llvm::cl::init(false)};
  Option<bool> ops{*this, "ops", llvm::cl::init(false)};
  Option<std::string> precision{*this, "precision", llvm::cl::init("")};

  void runOnOperation() override {
    frenzy::MemoryOptions o;
    o.tp = tp;
    o.sequenceParallel = sp;
    o.dp = dp;
    o.zeroStage = zero;
    o.storeDropoutMasks = masks;
    o.executorModel = executor;
    o.cpuWorkspace = executor;
    if (!precision.empty()) {
      auto p = frenzy::parsePrecision(precision);
      if (!p) {
        getOperation().emitError("unknown precision '") << precision << "'";
        return signalPassFailure();
      }
      o.precision = *p;
    }
    auto r = frenzy::parseRecompute(recompute);
    if (!r) {
      getOperation().emitError("unknown recompute '")
          << recompute << "'; valid values: none, selective, full";
      return signalPassFailure();
    }
    o.recompute = *r;
    auto report = frenzy::analyzeMemory(getOperation(), o);
    if (failed(report))
      return signalPassFailure();
    auto &os = llvm::outs();
    if (ops)
      for (const frenzy::OpMemory &m : report->ops)
        os << "op " << m.op->getName() << ": result " << m.resultBytes
           << " B, workspace " << m.workspace << " B, live after "
           << m.liveAfter << " B\n";
    if (ops)
      for (const auto &sv : report->saved)
        os << "saved value of " << sv.op->getName() << " in block "
           << sv.block << ": " << sv.bytes << " B"
           << (sv.value ? "" : " (kernel state)") << "\n";
    for (auto [block, bytes] : report->savedByBlock) {
      os << "saved ";
      if (block == frenzy::BlockAttr::kEmbed)
        os << "embed";
      else if (block == frenzy::BlockAttr::kHead)
        os << "head";
      else
        os << "block " << block;
      os << ": " << bytes << " B\n";
    }
    const frenzy::ModelStateBytes &s = report->state;
    os << "state: " << s.parameters << " params, weights " << s.weights
       << " B, gradients " << s.gradients << " B, master " << s.master
       << " B, moments " << s.moments << " B\n";
    os << "other persistent: " << report->otherPersistent << " B\n";
    os << "activation peak: " << report->activationPeak << " B\n";
    os << "peak: " << report->peak() << " B\n";
  }
};
} // namespace

namespace frenzy::test {
void registerMemoryTestPass() { PassRegistration<TestPrintMemoryPass>(); }
} // namespace frenzy::test
