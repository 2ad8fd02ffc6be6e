//===- TensorParallelCheck.cpp - the frenzy-tp-check pass -----------------===//
//
// The partition is searched on the unsplit training step, after autodiff,
// where frenzy-tensor-parallel can no longer run. So before autodiff this
// pass tries the split for each TP degree the planner may choose (and those
// a --layout pins) and records the ones that fail, with the reason; the
// partitioner reads them back (readTpRefusals) and never offers them.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Dialect/Frenzy/Transforms/TensorParallel.h"
#include "frenzy/Planning/PlanProblem.h"

#include "mlir/IR/Builders.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYTPCHECK
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {
struct FrenzyTpCheckPass : frenzy::impl::FrenzyTpCheckBase<FrenzyTpCheckPass> {
  using FrenzyTpCheckBase::FrenzyTpCheckBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<int64_t> list(degrees.begin(), degrees.end());
    if (list.empty())
      list = plan::PlanProblem().tpDegrees;
    llvm::sort(list);
    list.erase(std::unique(list.begin(), list.end()), list.end());
    Builder b(module.getContext());
    SmallVector<NamedAttribute> refused;
    for (int64_t d : list)
      if (std::string why = tensorParallelRefusal(module, d); !why.empty())
        refused.push_back(b.getNamedAttr(std::to_string(d),
                                         b.getStringAttr(why)));
    module->setAttr(kTpRefusalsAttrName, b.getDictionaryAttr(refused));
  }
};
} // namespace

std::map<int64_t, std::string> frenzy::readTpRefusals(ModuleOp module) {
  std::map<int64_t, std::string> out;
  auto dict = module->getAttrOfType<DictionaryAttr>(kTpRefusalsAttrName);
  if (!dict)
    return out;
  for (NamedAttribute a : dict) {
    int64_t degree = 0;
    auto why = dyn_cast<StringAttr>(a.getValue());
    if (!a.getName().getValue().getAsInteger(10, degree) && why)
      out[degree] = why.str();
  }
  return out;
}
