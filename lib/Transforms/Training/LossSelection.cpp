//===- LossSelection.cpp - find or add the training loss ------------------===//
//
// A model exported for training carries its loss (SoftmaxCrossEntropyLoss) as
// a scalar output. A model exported for inference has only logits; for it
// the user asks for a loss by name, and the targets input is created when the
// export dropped it (an unused input does not survive torch.onnx.export).
//
//===----------------------------------------------------------------------===//
#include "LossSelection.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

using namespace mlir;
using namespace frenzy;

StringRef frenzy::resultName(func::FuncOp func, unsigned i) {
  if (auto s = func.getResultAttrOfType<StringAttr>(i, "frenzy.name"))
    return s.getValue();
  return "";
}

StringRef frenzy::argumentName(func::FuncOp func, unsigned i) {
  if (auto s = func.getArgAttrOfType<StringAttr>(i, "frenzy.name"))
    return s.getValue();
  return "";
}

static bool isScalarFloat(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.getRank() == 0 && isa<FloatType>(r.getElementType());
}

/// The logits result: the float result of rank >= 2 named "logits", else the
/// first one.
static std::optional<unsigned> findLogits(func::FuncOp func) {
  std::optional<unsigned> found;
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    auto r = dyn_cast<RankedTensorType>(t);
    if (!r || r.getRank() < 2 || !isa<FloatType>(r.getElementType()))
      continue;
    if (resultName(func, i) == "logits")
      return i;
    if (!found)
      found = i;
  }
  return found;
}

static FailureOr<unsigned> addCrossEntropyLoss(func::FuncOp func) {
  std::optional<unsigned> logitsIndex = findLogits(func);
  if (!logitsIndex)
    return func.emitError("--loss=cross-entropy needs a float logits output "
                          "of shape [..., vocab]; the model has none");
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Value logits = ret.getOperand(*logitsIndex);
  auto lt = cast<RankedTensorType>(logits.getType());
  ArrayRef<int64_t> targetShape = lt.getShape().drop_back();
  auto targetType = RankedTensorType::get(
      targetShape, IntegerType::get(func.getContext(), 64));

  // Use an integer argument of the right shape named like targets, else add.
  Block &body = func.getBody().front();
  Value targets;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    StringRef n = argumentName(func, i);
    if (func.getArgument(i).getType() == targetType &&
        (n == "targets" || n == "labels" || n == "target"))
      targets = func.getArgument(i);
  }
  if (!targets) {
    unsigned idx = func.getNumArguments();
    func.insertArgument(idx, targetType, {}, func.getLoc());
    func.setArgAttr(idx, "frenzy.name",
                    StringAttr::get(func.getContext(), "targets"));
    targets = body.getArgument(idx);
  }

  OpBuilder b(ret);
  Location loc = logits.getLoc();
  int64_t rows = 1;
  for (int64_t d : targetShape)
    rows *= d;
  int64_t vocab = lt.getShape().back();
  Value flat = b.create<ReshapeOp>(
      loc, RankedTensorType::get({rows, vocab}, lt.getElementType()), logits);
  Value flatTargets = b.create<ReshapeOp>(
      loc, RankedTensorType::get({rows}, targetType.getElementType()),
      targets);
  Value loss = b.create<SoftmaxCrossEntropyLossOp>(
      loc, RankedTensorType::get({}, lt.getElementType()), flat, flatTargets,
      Value(), b.getStringAttr("mean"), b.getI64IntegerAttr(-100));
  for (Operation *op : {flat.getDefiningOp(), flatTargets.getDefiningOp(),
                        loss.getDefiningOp()})
    if (Operation *def = logits.getDefiningOp())
      if (Attribute blk = def->getAttr(FrenzyDialect::kBlockAttrName))
        op->setAttr(FrenzyDialect::kBlockAttrName, blk);

  unsigned idx = func.getNumResults();
  ret->insertOperands(ret.getNumOperands(), loss);
  func.insertResult(idx, loss.getType(), {});
  func.setResultAttr(idx, "frenzy.name",
                     StringAttr::get(func.getContext(), "loss"));
  return idx;
}

FailureOr<unsigned> frenzy::selectLoss(func::FuncOp func,
                                       bool addCrossEntropy) {
  std::optional<unsigned> loss;
  unsigned scalars = 0;
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    if (!isScalarFloat(t))
      continue;
    ++scalars;
    if (!loss || resultName(func, i) == "loss")
      loss = i;
  }
  if (loss && addCrossEntropy)
    return func.emitError("the model already outputs a scalar loss ('")
           << resultName(func, *loss)
           << "'); drop --loss=cross-entropy to train on it";
  if (loss) {
    if (scalars > 1 && resultName(func, *loss) != "loss")
      return func.emitError("the model has ")
             << scalars << " scalar outputs and none is named 'loss'; name "
             << "the training loss output 'loss' in the export";
    return *loss;
  }
  if (addCrossEntropy)
    return addCrossEntropyLoss(func);
  return func.emitError(
      "the model has no scalar loss output: export it with its loss (e.g. "
      "F.cross_entropy, which becomes SoftmaxCrossEntropyLoss), or pass "
      "--loss=cross-entropy to add a mean cross-entropy over its logits "
      "output and a targets input");
}
