//===- ElementwiseGrad.cpp - gradient rules of elementwise ops ------------===//
//
// Unary rules reuse the forward result where the derivative is a function of
// it (exp, tanh, sigmoid, sqrt, reciprocal), so no extra value is saved.
// Binary rules sum the gradient back over broadcast dims (unbroadcast).
// Fused activations get one backward kernel (activation_grad) instead of a
// chain of elementwise ops.
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

#include <cmath>

using namespace mlir;
using namespace frenzy;
using namespace frenzy::grad;

namespace {
/// Shared prologue: one gradient slot per operand, a builder at the op.
GradBuilder begin(Operation *op, OpBuilder &b, SmallVectorImpl<Value> &out) {
  out.assign(op->getNumOperands(), Value());
  return GradBuilder(b, op->getLoc());
}
} // namespace

//===--- unary ------------------------------------------------------------===//

LogicalResult NegOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.neg(dys[0]);
  return success();
}

LogicalResult AbsOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value nonNeg = g.greaterEqual(getInput(), g.scalar(0.0, getInput()));
  dxs[0] = g.where(nonNeg, dys[0], g.neg(dys[0]));
  return success();
}

LogicalResult ExpOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.mul(dys[0], getResult());
  return success();
}

LogicalResult LogOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.div(dys[0], getInput());
  return success();
}

LogicalResult SqrtOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.div(g.mul(dys[0], g.scalar(0.5, getResult())), getResult());
  return success();
}

LogicalResult ReciprocalOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                           SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value y = getResult();
  dxs[0] = g.neg(g.mul(dys[0], g.mul(y, y)));
  return success();
}

LogicalResult TanhOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value y = getResult();
  dxs[0] = g.mul(dys[0], g.sub(g.scalar(1.0, y), g.mul(y, y)));
  return success();
}

LogicalResult ErfOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  // d erf(x) = 2/sqrt(pi) exp(-x^2)
  GradBuilder g = begin(*this, b, dxs);
  Value x = getInput();
  Value e = b.create<ExpOp>(getLoc(), x.getType(), g.neg(g.mul(x, x)));
  dxs[0] = g.mul(dys[0], g.mul(e, g.scalar(2.0 / std::sqrt(M_PI), x)));
  return success();
}

LogicalResult SigmoidOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value y = getResult();
  dxs[0] = g.mul(dys[0], g.mul(y, g.sub(g.scalar(1.0, y), y)));
  return success();
}

LogicalResult ReluOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value zero = g.scalar(0.0, getInput());
  Value positive = b.create<GreaterOp>(
      getLoc(),
      RankedTensorType::get(shapeOf(getInput()), b.getI1Type()), getInput(),
      zero);
  dxs[0] = g.where(positive, dys[0], zero);
  return success();
}

LogicalResult SinOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value c = b.create<CosOp>(getLoc(), getInput().getType(), getInput());
  dxs[0] = g.mul(dys[0], c);
  return success();
}

LogicalResult CosOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value s = b.create<SinOp>(getLoc(), getInput().getType(), getInput());
  dxs[0] = g.neg(g.mul(dys[0], s));
  return success();
}

LogicalResult SiluOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  begin(*this, b, dxs);
  dxs[0] = b.create<ActivationGradOp>(getLoc(), getType(), dys[0], getInput(),
                                      b.getStringAttr("silu"));
  return success();
}

LogicalResult GeluOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  begin(*this, b, dxs);
  StringRef kind = getApproximate() == "tanh" ? "gelu_tanh" : "gelu_erf";
  dxs[0] = b.create<ActivationGradOp>(getLoc(), getType(), dys[0], getInput(),
                                      b.getStringAttr(kind));
  return success();
}

LogicalResult SwiGLUOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  // y = silu(gate) * up
  GradBuilder g = begin(*this, b, dxs);
  Value act = b.create<SiluOp>(getLoc(), getGate().getType(), getGate());
  dxs[0] = b.create<ActivationGradOp>(getLoc(), getType(),
                                      g.mul(dys[0], getUp()), getGate(),
                                      b.getStringAttr("silu"));
  dxs[1] = g.mul(dys[0], act);
  return success();
}

//===--- binary -----------------------------------------------------------===//

LogicalResult AddOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.unbroadcast(dys[0], getLhs().getType());
  dxs[1] = g.unbroadcast(dys[0], getRhs().getType());
  return success();
}

LogicalResult SubOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.unbroadcast(dys[0], getLhs().getType());
  dxs[1] = g.unbroadcast(g.neg(dys[0]), getRhs().getType());
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  dxs[0] = g.unbroadcast(g.mul(dys[0], getRhs()), getLhs().getType());
  dxs[1] = g.unbroadcast(g.mul(dys[0], getLhs()), getRhs().getType());
  return success();
}

LogicalResult DivOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  // y = a / b: da = g / b, db = -g * y / b.
  GradBuilder g = begin(*this, b, dxs);
  Value da = g.div(dys[0], getRhs());
  dxs[0] = g.unbroadcast(da, getLhs().getType());
  dxs[1] = g.unbroadcast(g.neg(g.mul(da, getResult())), getRhs().getType());
  return success();
}

LogicalResult PowOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  // y = a ^ p: da = g * p * a^(p-1), dp = g * y * log(a).
  GradBuilder g = begin(*this, b, dxs);
  Value a = getLhs(), p = getRhs();
  if (!isFloatTensor(p))
    return emitOpError("has no gradient rule for an integer exponent");
  Value pm1 = g.sub(p, g.scalar(1.0, p));
  Value apm1 = b.create<PowOp>(getLoc(), getType(), a, pm1);
  dxs[0] = g.unbroadcast(g.mul(dys[0], g.mul(apm1, p)), a.getType());
  Value loga = b.create<LogOp>(getLoc(), a.getType(), a);
  dxs[1] = g.unbroadcast(g.mul(dys[0], g.mul(getResult(), loga)), p.getType());
  return success();
}

/// max/min: the gradient goes to the operand that was selected (the left one
/// on ties, as PyTorch's elementwise maximum does not split it).
static void minMaxGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs, bool isMax) {
  GradBuilder g = begin(op, b, dxs);
  Value l = op->getOperand(0), r = op->getOperand(1);
  Value pickLeft = isMax ? g.greaterEqual(l, r) : g.greaterEqual(r, l);
  Value zero = g.scalar(0.0, dys[0]);
  dxs[0] = g.unbroadcast(g.where(pickLeft, dys[0], zero), l.getType());
  dxs[1] = g.unbroadcast(g.where(pickLeft, zero, dys[0]), r.getType());
}

LogicalResult MaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  minMaxGrad(*this, b, dys, dxs, /*isMax=*/true);
  return success();
}

LogicalResult MinOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  minMaxGrad(*this, b, dys, dxs, /*isMax=*/false);
  return success();
}

LogicalResult WhereOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  GradBuilder g = begin(*this, b, dxs);
  Value zero = g.scalar(0.0, dys[0]);
  dxs[1] = g.unbroadcast(g.where(getCond(), dys[0], zero), getX().getType());
  dxs[2] = g.unbroadcast(g.where(getCond(), zero, dys[0]), getY().getType());
  return success();
}

//===--- type and masking -------------------------------------------------===//

LogicalResult CastOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  begin(*this, b, dxs);
  if (isFloatTensor(getInput()) && isFloatTensor(getResult()))
    dxs[0] = b.create<CastOp>(getLoc(), getInput().getType(), dys[0]);
  return success();
}

LogicalResult DropoutOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  // Inverted dropout is linear: the gradient goes through the same mask.
  begin(*this, b, dxs);
  if (!getTraining() || getRatio().isZero()) {
    dxs[0] = dys[0];
    return success();
  }
  dxs[0] = b.create<DropoutOp>(getLoc(), getType(), dys[0], getRatioAttr(),
                               getTrainingAttr(), getSeedAttr(),
                               getTpSplitAttr());
  return success();
}

LogicalResult TriluOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  begin(*this, b, dxs);
  dxs[0] = b.create<TriluOp>(getLoc(), getType(), dys[0], getUpperAttr(),
                             getKAttr());
  return success();
}
