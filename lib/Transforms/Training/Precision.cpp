//===- Precision.cpp - the frenzy-precision pass --------------------------===//
//
// Records the policy on the module; analyses and the plan writer read it
// through getPrecision(). Tensor types in the IR stay as imported (fp32):
// the policy, not a rewrite of every type, says what each class occupies.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/Precision.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYPRECISION
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {
struct FrenzyPrecisionPass
    : frenzy::impl::FrenzyPrecisionBase<FrenzyPrecisionPass> {
  using FrenzyPrecisionBase::FrenzyPrecisionBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Precision> p = parsePrecision(policy);
    if (!p) {
      module.emitError("unknown precision '")
          << policy << "'; valid values: " << validPrecisionNames();
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    module->setAttr("frenzy.precision", b.getStringAttr(precisionName(*p)));
    if (*p == Precision::FP16Mixed)
      module->setAttr("frenzy.loss_scale", b.getF64FloatAttr(lossScale));
    else
      module->removeAttr("frenzy.loss_scale");
  }
};
} // namespace
