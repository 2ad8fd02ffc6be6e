//===- ParallelGrad.cpp - gradient rules of the TP communication ops ------===//
//
// f and g are each other's adjoint: the copy's gradient is a sum over the
// group (each rank holds a partial input gradient of its column block), the
// sum's gradient is a copy (every rank's output fed the same loss).
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
