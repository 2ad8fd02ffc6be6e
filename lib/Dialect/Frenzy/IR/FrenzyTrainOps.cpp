//===- FrenzyTrainOps.cpp - verifiers and costs of backward/optimizer ops -===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace frenzy;

LogicalResult UnbroadcastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(in.getShape(), out.getShape(),
                                          shape) ||
      ArrayRef<int64_t>(shape) != in.getShape())
    return emitOpError("result shape must broadcast to the input shape");
  return success();
}

LogicalResult ActivationGradOp::verify() {
  StringRef k = getKind();
  if (k != "gelu_tanh" && k != "gelu_erf" && k != "silu")
    return emitOpError("kind must be gelu_tanh, gelu_erf or silu, not '")
           << k << "'";
  return success();
}

static LogicalResult verifyUpdate(Operation *op, Value param, Value grad) {
  if (param.getType() != grad.getType())
    return op->emitOpError("parameter and gradient types differ: ")
           << param.getType() << " vs " << grad.getType();
  if (!param.getDefiningOp<ParamOp>())
    return op->emitOpError("updates a value that is not a frenzy.param");
  return success();
}

LogicalResult AdamWUpdateOp::verify() {
  return verifyUpdate(*this, getParam(), getGrad());
}
LogicalResult SGDUpdateOp::verify() {
  return verifyUpdate(*this, getParam(), getGrad());
}

// Recompute q k^T, then dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q:
// five matmuls of the forward's size where the forward has two.
int64_t AttentionGradOp::getFlops() {
  auto q = cast<RankedTensorType>(getQ().getType());
  auto k = cast<RankedTensorType>(getK().getType());
  int64_t tq = q.getShape()[q.getRank() - 2], d = q.getShape().back();
  int64_t tk = k.getShape()[k.getRank() - 2];
  int64_t batch = q.getNumElements() / (tq * d);
  return 5 * 2 * batch * tq * tk * d;
}
