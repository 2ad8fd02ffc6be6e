//===- ParallelGrad.cpp - gradient rules of the TP communication ops ------===//
//
// f and g are each other's adjoint: the copy's gradient is a sum over the
// group (each rank holds a partial input gradient of its column block), the
// sum's gradient is a copy (every rank's output fed the same loss).
// Sequence parallelism's pairs likewise: scatter and gather, all-gather and
// reduce-scatter (each result type is its gradient's operand type).
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

using namespace mlir;
using namespace frenzy;

LogicalResult TPCopyOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, b.create<TPAllReduceOp>(getLoc(), dys[0]));
  return success();
}

LogicalResult TPAllReduceOp::buildGradients(OpBuilder &b,
                                            ArrayRef<Value> dys,
                                            SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, dys[0]);
  return success();
}

/// `Op`'s gradient: a `Grad` op from the result's gradient to the input's
/// type.
template <class Grad>
static void spGradient(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, b.create<Grad>(op->getLoc(), op->getOperand(0).getType(),
                               dys[0]));
}

LogicalResult SPScatterOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  spGradient<SPGatherOp>(*this, b, dys, dxs);
  return success();
}

LogicalResult SPGatherOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  spGradient<SPScatterOp>(*this, b, dys, dxs);
  return success();
}

LogicalResult SPAllGatherOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                            SmallVectorImpl<Value> &dxs) {
  spGradient<SPReduceScatterOp>(*this, b, dys, dxs);
  return success();
}

LogicalResult SPReduceScatterOp::buildGradients(OpBuilder &b,
                                                ArrayRef<Value> dys,
                                                SmallVectorImpl<Value> &dxs) {
  spGradient<SPAllGatherOp>(*this, b, dys, dxs);
  return success();
}
