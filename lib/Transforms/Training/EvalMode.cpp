//===- EvalMode.cpp - the frenzy-eval-mode pass ---------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYEVALMODE
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {
struct FrenzyEvalModePass
    : frenzy::impl::FrenzyEvalModeBase<FrenzyEvalModePass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      if (auto d = dyn_cast<DropoutOp>(op))
        d.setTrainingAttr(b.getBoolAttr(false));
      else if (auto a = dyn_cast<AttentionOp>(op))
        a.setDropoutAttr(b.getF64FloatAttr(0.0));
    });
  }
};
} // namespace
