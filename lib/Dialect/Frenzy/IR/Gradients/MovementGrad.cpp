//===- MovementGrad.cpp - gradient rules of data-movement ops -------------===//
//
// Data movement is linear, so each rule applies the adjoint movement:
// inverse permutation, reshape back, sum over broadcast dims, scatter.
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

using namespace mlir;
using namespace frenzy;
using namespace frenzy::grad;

LogicalResult TransposeOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  SmallVector<int64_t> inverse(getPerm().size());
  for (auto [i, p] : llvm::enumerate(getPerm()))
    inverse[p] = i;
  dxs[0] = GradBuilder(b, getLoc()).transpose(dys[0], inverse);
  return success();
}

/// Reshape-like ops: the gradient is the result gradient in the input shape.
static void reshapeBack(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                        SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  dxs[0] = GradBuilder(b, op->getLoc())
               .reshape(dys[0], shapeOf(op->getOperand(0)));
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  reshapeBack(*this, b, dys, dxs);
  return success();
}
LogicalResult SqueezeOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  reshapeBack(*this, b, dys, dxs);
  return success();
}
LogicalResult UnsqueezeOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  reshapeBack(*this, b, dys, dxs);
  return success();
}

LogicalResult ExpandOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  dxs[0] = GradBuilder(b, getLoc()).unbroadcast(dys[0], getInput().getType());
  return success();
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  dxs[0] = b.create<SliceGradOp>(getLoc(), getInput().getType(), dys[0],
                                 getStartsAttr(), getLimitsAttr(),
                                 getStridesAttr());
  return success();
}

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs.assign(getNumOperands(), Value());
  int64_t axis = getAxis(), offset = 0;
  ArrayRef<int64_t> outShape = shapeOf(getResult());
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    int64_t size = shapeOf(in)[axis];
    if (isFloatTensor(in)) {
      SmallVector<int64_t> starts(outShape.size(), 0), limits(outShape);
      SmallVector<int64_t> strides(outShape.size(), 1);
      starts[axis] = offset;
      limits[axis] = offset + size;
      dxs[i] = b.create<SliceOp>(getLoc(), in.getType(), dys[0],
                                 b.getDenseI64ArrayAttr(starts),
                                 b.getDenseI64ArrayAttr(limits),
                                 b.getDenseI64ArrayAttr(strides));
    }
    offset += size;
  }
  return success();
}

LogicalResult SplitOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  dxs[0] = b.create<ConcatOp>(getLoc(), getInput().getType(), dys,
                              getAxisAttr());
  return success();
}

LogicalResult GatherOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs.assign(2, Value());
  dxs[0] = b.create<GatherGradOp>(getLoc(), getData().getType(), dys[0],
                                  getIndices(), getAxisAttr());
  return success();
}
