//===- NormalizationGrad.cpp - gradient rules of norms, softmax, attention,
//                             loss ----------------------------------------===//
//
// These rules each emit one backward kernel from lib/.../FrenzyTrainOps.td.
// What the kernel takes as operands is what the forward pass must keep:
// norms keep their input (mean and 1/std are recomputed, they are cheap),
// softmax keeps its output, attention keeps q, k and v.
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

using namespace mlir;
using namespace frenzy;
using namespace frenzy::grad;

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  dxs.assign(getNumOperands(), Value());
  Type st = getScale().getType();
  auto op = b.create<LayerNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), st, st}, dys[0], getInput(),
      getScale(), getAxisAttr(), getEpsilonAttr());
  dxs[0] = op.getDinput();
  dxs[1] = op.getDscale();
  if (getBias())
    dxs[2] = op.getDbias();
  return success();
}

LogicalResult RMSNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  dxs.assign(getNumOperands(), Value());
  auto op = b.create<RMSNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), getScale().getType()}, dys[0],
      getInput(), getScale(), getAxisAttr(), getEpsilonAttr());
  dxs[0] = op.getDinput();
  dxs[1] = op.getDscale();
  return success();
}

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  dxs[0] = b.create<SoftmaxGradOp>(getLoc(), getType(), dys[0], getResult(),
                                   getAxisAttr(), b.getBoolAttr(false));
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                           SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  dxs[0] = b.create<SoftmaxGradOp>(getLoc(), getType(), dys[0], getResult(),
                                   getAxisAttr(), b.getBoolAttr(true));
  return success();
}

LogicalResult AttentionOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  dxs.assign(getNumOperands(), Value());
  auto op = b.create<AttentionGradOp>(
      getLoc(),
      TypeRange{getQ().getType(), getK().getType(), getV().getType()}, dys[0],
      getQ(), getK(), getV(), getMask(), getScaleAttr(), getCausalAttr(),
      getDropoutAttr(), getSeedAttr(), getTpPartsAttr());
  dxs[0] = op.getDq();
  dxs[1] = op.getDk();
  dxs[2] = op.getDv();
  return success();
}

LogicalResult
SoftmaxCrossEntropyLossOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  dxs.assign(getNumOperands(), Value());
  if (getWeights())
    return emitOpError("has no gradient rule with class weights; export the "
                       "loss without `weight`");
  if (getReduction() == "none")
    return emitOpError("has no gradient rule for reduction \"none\"; the "
                       "training loss must be a scalar (mean or sum)");
  dxs[0] = b.create<CrossEntropyGradOp>(
      getLoc(), getLogits().getType(), dys[0], getLogits(), getLabels(),
      getReductionAttr(), getIgnoreIndexAttr());
  return success();
}
