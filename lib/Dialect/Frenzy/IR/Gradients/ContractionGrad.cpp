//===- ContractionGrad.cpp - gradient rules of matmul, gemm, reductions ---===//
//
// A matmul against a 2-d weight is the common case (every projection of a
// transformer): its weight gradient is one [K, P] x [P, N] gemm over all
// P = batch * sequence rows, not a batched matmul followed by a sum, which
// would materialise one weight-sized tensor per row block.
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

using namespace mlir;
using namespace frenzy;
using namespace frenzy::grad;

LogicalResult MatMulOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs.assign(2, Value());
  GradBuilder g(b, getLoc());
  Value a = getLhs(), w = getRhs(), dy = dys[0];
  ArrayRef<int64_t> sa = shapeOf(a), sw = shapeOf(w);
  if (sa.size() < 2 || sw.size() < 2)
    return emitOpError("has no gradient rule for a 1-d operand; reshape it "
                       "to 2-d in the model");
  if (sw.size() == 2) {
    int64_t k = sa.back(), n = sw.back();
    int64_t p = 1;
    for (int64_t d : sa.drop_back())
      p *= d;
    Value a2 = g.reshape(a, {p, k});
    Value dy2 = g.reshape(dy, {p, n});
    dxs[0] = g.reshape(g.gemm(dy2, w, /*transA=*/false, /*transC=*/true), sa);
    dxs[1] = g.gemm(a2, dy2, /*transA=*/true, /*transC=*/false);
    return success();
  }
  dxs[0] = g.unbroadcast(g.matmul(dy, g.transposeLast2(w)), a.getType());
  dxs[1] = g.unbroadcast(g.matmul(g.transposeLast2(a), dy), w.getType());
  return success();
}

LogicalResult GemmOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  // y = alpha op(A) op(B) + beta C
  dxs.assign(getNumOperands(), Value());
  GradBuilder g(b, getLoc());
  Value dy = dys[0], a = getA(), w = getB();
  bool ta = getTransA(), tb = getTransB();
  double alpha = getAlpha().convertToDouble();
  dxs[0] = ta ? g.gemm(w, dy, tb, true, alpha) : g.gemm(dy, w, false, !tb, alpha);
  dxs[1] = tb ? g.gemm(dy, a, true, ta, alpha) : g.gemm(a, dy, !ta, false, alpha);
  if (Value c = getC()) {
    double beta = getBeta().convertToDouble();
    Value dc = beta == 1.0 ? dy : g.mul(dy, g.scalar(beta, dy));
    dxs[2] = g.unbroadcast(dc, c.getType());
  }
  return success();
}

/// Shape of the input with the reduced axes set to 1: the gradient, reshaped
/// to it, broadcasts back over the reduced axes.
static Value broadcastBack(GradBuilder &g, Value dy, Value input,
                           ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(shapeOf(input));
  for (int64_t ax : axes)
    kept[ax] = 1;
  Value r = g.reshape(dy, kept);
  if (shapeOf(r) == shapeOf(input))
    return r;
  return g.builder().create<ExpandOp>(g.location(), input.getType(), r);
}

LogicalResult ReduceSumOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  GradBuilder g(b, getLoc());
  dxs[0] = broadcastBack(g, dys[0], getInput(), getAxes());
  return success();
}

LogicalResult ReduceMeanOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                           SmallVectorImpl<Value> &dxs) {
  dxs.assign(1, Value());
  GradBuilder g(b, getLoc());
  int64_t count = 1;
  for (int64_t ax : getAxes())
    count *= shapeOf(getInput())[ax];
  Value scaled = g.mul(dys[0], g.scalar(1.0 / double(count), dys[0]));
  dxs[0] = broadcastBack(g, scaled, getInput(), getAxes());
  return success();
}
