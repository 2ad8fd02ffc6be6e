//===- Autodiff.cpp - reverse-mode differentiation of the model function --===//
//
// Builds the backward graph in the same function, after the forward ops, so
// that liveness, memory and cost analyses see one straight-line training
// step. Only values that both depend on a trainable parameter and reach the
// loss are differentiated; everything else (masks, positions, shapes) costs
// nothing. Each op supplies its own rule (GradientOpInterface); this pass
// only orders the rules, accumulates fan-out and reports what is missing.
//
//===----------------------------------------------------------------------===//
#include "LossSelection.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYAUTODIFF
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// Tags every op a gradient rule creates with the forward op's block and
/// `frenzy.backward`, so partitioning keeps a layer's backward with it.
struct TagNewOps : public OpBuilder::Listener {
  Attribute block;
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    if (block)
      op->setAttr(FrenzyDialect::kBlockAttrName, block);
    op->setAttr("frenzy.backward", UnitAttr::get(op->getContext()));
  }
};

struct FrenzyAutodiffPass
    : frenzy::impl::FrenzyAutodiffBase<FrenzyAutodiffPass> {
  using FrenzyAutodiffBase::FrenzyAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>("forward");
    if (!func) {
      module.emitError("frenzy-autodiff expects a @forward function (an "
                       "imported model); found none");
      return signalPassFailure();
    }
    if (loss != "auto" && loss != "cross-entropy") {
      module.emitError("unknown --loss '")
          << loss << "'; valid values: auto, cross-entropy";
      return signalPassFailure();
    }
    FailureOr<unsigned> lossIndex = selectLoss(func, loss == "cross-entropy");
    if (failed(lossIndex) || failed(differentiate(func, *lossIndex)))
      return signalPassFailure();
    func.setName("train_step");
    module->setAttr("frenzy.training", UnitAttr::get(&getContext()));
  }

  /// Seeds for training dropouts (also inside fused attention): distinct
  /// per op so that masks are independent, fixed so backward matches.
  void assignDropoutSeeds(func::FuncOp func) {
    int64_t next = 1;
    func.walk([&](Operation *op) {
      auto i64 = [&](int64_t v) {
        return IntegerAttr::get(IntegerType::get(op->getContext(), 64), v);
      };
      if (auto d = dyn_cast<DropoutOp>(op))
        if (d.getTraining() && !d.getRatio().isZero())
          d.setSeedAttr(i64(next++));
      if (auto a = dyn_cast<AttentionOp>(op))
        if (!a.getDropout().isZero())
          a.setSeedAttr(i64(next++));
    });
  }

  LogicalResult differentiate(func::FuncOp func, unsigned lossIndex) {
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value lossValue = ret.getOperand(lossIndex);
    assignDropoutSeeds(func);

    // Forward: values that depend on a trainable parameter, and which one
    // (for error messages).
    llvm::DenseMap<Value, ParamOp> dependsOn;
    SmallVector<ParamOp> params;
    for (Operation &op : body.without_terminator()) {
      if (auto p = dyn_cast<ParamOp>(op)) {
        if (p.getTrainable() && isFloatTensor(p.getResult())) {
          dependsOn[p.getResult()] = p;
          params.push_back(p);
        }
        continue;
      }
      ParamOp from;
      for (Value v : op.getOperands())
        if (auto it = dependsOn.find(v); it != dependsOn.end() && !from)
          from = it->second;
      if (from)
        for (Value r : op.getResults())
          if (isFloatTensor(r))
            dependsOn[r] = from;
    }
    if (!dependsOn.count(lossValue))
      return func.emitError("the loss does not depend on any trainable "
                            "parameter; nothing to train");

    // Backward: walk ops in reverse, each rule consuming result gradients.
    llvm::DenseMap<Value, Value> grads;
    OpBuilder b(ret);
    TagNewOps tagger;
    b.setListener(&tagger);
    Location lossLoc = lossValue.getLoc();
    grads[lossValue] = b.create<ConstantOp>(
        lossLoc, DenseElementsAttr::get(
                     cast<ShapedType>(lossValue.getType()),
                     FloatAttr::get(getElementTypeOrSelf(lossValue), 1.0)));

    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);
    for (Operation *op : llvm::reverse(forwardOps)) {
      if (isa<ParamOp, ConstantOp>(op))
        continue;
      bool hasGrad = llvm::any_of(op->getResults(),
                                  [&](Value r) { return grads.count(r); });
      bool needsGrad = llvm::any_of(op->getOperands(), [&](Value v) {
        return dependsOn.count(v);
      });
      if (!hasGrad || !needsGrad)
        continue;
      auto rule = dyn_cast<GradientOpInterface>(op);
      if (!rule) {
        ParamOp p;
        for (Value v : op->getOperands())
          if (dependsOn.count(v))
            p = dependsOn[v];
        return op->emitError("no gradient rule for '")
               << op->getName() << "' on the path from parameter '"
               << p.getName() << "' to the loss; mark that parameter "
               << "non-trainable or replace the op in the model";
      }
      tagger.block = op->getAttr(FrenzyDialect::kBlockAttrName);
      SmallVector<Value> resultGrads;
      for (Value r : op->getResults()) {
        Value g = grads.lookup(r);
        if (!g && isFloatTensor(r))
          g = b.create<ConstantOp>(
              op->getLoc(),
              DenseElementsAttr::get(
                  cast<ShapedType>(r.getType()),
                  FloatAttr::get(getElementTypeOrSelf(r), 0.0)));
        resultGrads.push_back(g);
      }
      SmallVector<Value> operandGrads;
      if (failed(rule.buildGradients(b, resultGrads, operandGrads)))
        return failure();
      for (auto [v, g] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!g || !dependsOn.count(v))
          continue;
        Value &acc = grads[v];
        acc = acc ? b.create<AddOp>(op->getLoc(), v.getType(), acc, g)
                        .getResult()
                  : g;
      }
    }
    b.setListener(nullptr);

    // Every parameter gradient becomes a named result.
    SmallVector<Value> results(ret.getOperands());
    for (ParamOp p : params) {
      Value g = grads.lookup(p.getResult());
      if (!g) {
        p.emitWarning("parameter '")
            << p.getName() << "' does not affect the loss; it is not trained";
        continue;
      }
      unsigned idx = func.getNumResults();
      func.insertResult(idx, g.getType(), {});
      std::string name = ("grad." + p.getName()).str();
      func.setResultAttr(idx, "frenzy.name", b.getStringAttr(name));
      func.setResultAttr(idx, "frenzy.grad_of", p.getNameAttr());
      results.push_back(g);
    }
    ret->setOperands(results);
    eraseDeadOps(body);
    return success();
  }

  /// Rules emit every operand's gradient; the ones nobody needs (gradients
  /// of constants, of non-trainable buffers) are dropped here.
  void eraseDeadOps(Block &body) {
    // Users come after producers, so one pass in reverse order suffices.
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }
};

} // namespace
