//===- Optimizer.cpp - the frenzy-optimizer pass --------------------------===//
//
// Turns the gradients that frenzy-autodiff returns into in-place parameter
// updates. The update ops sit in the graph (not in the runtime's driver
// loop) so that memory analysis sees optimizer state per parameter and the
// partitioner places each update on the rank that owns the parameter.
//
//===----------------------------------------------------------------------===//
#include "LossSelection.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYOPTIMIZER
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {
struct FrenzyOptimizerPass
    : frenzy::impl::FrenzyOptimizerBase<FrenzyOptimizerPass> {
  using FrenzyOptimizerBase::FrenzyOptimizerBase;

  LogicalResult checkOptions(ModuleOp module) {
    if (kind != "adamw" && kind != "sgd")
      return module.emitError("unknown optimizer '")
             << kind << "'; valid values: adamw, sgd";
    if (lr <= 0 || warmupSteps < 0 || totalSteps < 0 || clipNorm < 0 ||
        weightDecay < 0 || minLr < 0)
      return module.emitError("optimizer options lr must be > 0 and "
                              "warmup-steps, total-steps, clip-norm, "
                              "weight-decay, min-lr >= 0");
    if (totalSteps > 0 && warmupSteps > totalSteps)
      return module.emitError("warmup-steps (")
             << warmupSteps << ") exceeds total-steps (" << totalSteps << ")";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>("train_step");
    if (!func) {
      module.emitError("frenzy-optimizer runs after frenzy-autodiff; there is "
                       "no @train_step function");
      return signalPassFailure();
    }
    if (failed(checkOptions(module)))
      return signalPassFailure();

    llvm::StringMap<ParamOp> params;
    func.walk([&](ParamOp p) { params[p.getName()] = p; });

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    SmallVector<Value> grads;
    SmallVector<ParamOp> owners;
    llvm::BitVector drop(func.getNumResults());
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto of = func.getResultAttrOfType<StringAttr>(i, "frenzy.grad_of");
      if (!of)
        continue;
      grads.push_back(ret.getOperand(i));
      owners.push_back(params.lookup(of.getValue()));
      drop.set(i);
    }
    if (grads.empty()) {
      module.emitError("no gradients to apply; run frenzy-autodiff first");
      return signalPassFailure();
    }

    Location loc = ret.getLoc();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    auto clip = b.create<ClipGradNormOp>(loc, TypeRange{scalar, scalar}, grads,
                                         b.getF64FloatAttr(clipNorm));
    for (auto [g, p] : llvm::zip(grads, owners)) {
      double decay =
          cast<RankedTensorType>(p.getType()).getRank() >= 2 ? double(weightDecay)
                                                             : 0.0;
      Operation *update;
      if (kind == "adamw")
        update = b.create<AdamWUpdateOp>(p.getLoc(), p.getResult(), g,
                                         clip.getScale(), p.getNameAttr(),
                                         b.getF64FloatAttr(decay));
      else
        update = b.create<SGDUpdateOp>(p.getLoc(), p.getResult(), g,
                                       clip.getScale(), p.getNameAttr(),
                                       b.getF64FloatAttr(decay));
      if (Operation *def = g.getDefiningOp())
        if (Attribute blk = def->getAttr(FrenzyDialect::kBlockAttrName))
          update->setAttr(FrenzyDialect::kBlockAttrName, blk);
    }

    // Results: the gradients go, the global norm comes.
    SmallVector<Value> kept;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i)
      if (!drop.test(i))
        kept.push_back(ret.getOperand(i));
    kept.push_back(clip.getNorm());
    ret->setOperands(kept);
    func.eraseResults(drop);
    unsigned idx = func.getNumResults();
    func.insertResult(idx, scalar, {});
    func.setResultAttr(idx, "frenzy.name", b.getStringAttr("grad_norm"));

    SmallVector<NamedAttribute> cfg = {
        b.getNamedAttr("kind", b.getStringAttr(kind)),
        b.getNamedAttr("lr", b.getF64FloatAttr(lr)),
        b.getNamedAttr("min_lr", b.getF64FloatAttr(minLr)),
        b.getNamedAttr("warmup_steps", b.getI64IntegerAttr(warmupSteps)),
        b.getNamedAttr("total_steps", b.getI64IntegerAttr(totalSteps)),
        b.getNamedAttr("clip_norm", b.getF64FloatAttr(clipNorm)),
    };
    if (kind == "adamw") {
      cfg.push_back(b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)));
      cfg.push_back(b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)));
      cfg.push_back(b.getNamedAttr("eps", b.getF64FloatAttr(eps)));
    } else {
      cfg.push_back(b.getNamedAttr("momentum", b.getF64FloatAttr(momentum)));
    }
    module->setAttr("frenzy.optimizer", b.getDictionaryAttr(cfg));
  }
};
} // namespace
