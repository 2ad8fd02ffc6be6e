//===- GradBuilder.cpp - small builders shared by the gradient rules ------===//
#include "GradBuilder.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace frenzy;
using namespace frenzy::grad;

ArrayRef<int64_t> grad::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

bool grad::isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

static Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

Value GradBuilder::scalar(double v, Value like) {
  auto type = RankedTensorType::get({}, elementOf(like));
  auto attr = DenseElementsAttr::get(
      type, FloatAttr::get(type.getElementType(), v));
  return b.create<ConstantOp>(loc, attr);
}

Value GradBuilder::zeros(Type type) {
  auto t = cast<RankedTensorType>(type);
  auto attr =
      DenseElementsAttr::get(t, FloatAttr::get(t.getElementType(), 0.0));
  return b.create<ConstantOp>(loc, attr);
}

Type GradBuilder::broadcastType(Value a, Value c, Type elementType) {
  SmallVector<int64_t> shape;
  bool ok = OpTrait::util::getBroadcastedShape(shapeOf(a), shapeOf(c), shape);
  (void)ok;
  assert(ok && "gradient rule built a non-broadcastable pair");
  return RankedTensorType::get(shape, elementType ? elementType : elementOf(a));
}

Value GradBuilder::add(Value a, Value c) {
  return b.create<AddOp>(loc, broadcastType(a, c), a, c);
}
Value GradBuilder::sub(Value a, Value c) {
  return b.create<SubOp>(loc, broadcastType(a, c), a, c);
}
Value GradBuilder::mul(Value a, Value c) {
  return b.create<MulOp>(loc, broadcastType(a, c), a, c);
}
Value GradBuilder::div(Value a, Value c) {
  return b.create<DivOp>(loc, broadcastType(a, c), a, c);
}
Value GradBuilder::neg(Value a) { return b.create<NegOp>(loc, a.getType(), a); }

Value GradBuilder::where(Value cond, Value a, Value c) {
  SmallVector<int64_t> ac, full;
  OpTrait::util::getBroadcastedShape(shapeOf(a), shapeOf(c), ac);
  OpTrait::util::getBroadcastedShape(ac, shapeOf(cond), full);
  return b.create<WhereOp>(loc, RankedTensorType::get(full, elementOf(a)),
                           cond, a, c);
}

Value GradBuilder::greaterEqual(Value a, Value c) {
  return b.create<GreaterEqualOp>(loc, broadcastType(a, c, b.getI1Type()), a,
                                  c);
}

Value GradBuilder::unbroadcast(Value g, Type type) {
  if (g.getType() == type)
    return g;
  return b.create<UnbroadcastOp>(loc, type, g);
}

Value GradBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elementOf(v));
  if (type == v.getType())
    return v;
  return b.create<ReshapeOp>(loc, type, v);
}

Value GradBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(shapeOf(v)[p]);
  return b.create<TransposeOp>(loc, RankedTensorType::get(shape, elementOf(v)),
                               v, b.getDenseI64ArrayAttr(perm));
}

Value GradBuilder::transposeLast2(Value v) {
  int64_t r = shapeOf(v).size();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  return transpose(v, perm);
}

Value GradBuilder::matmul(Value a, Value c) {
  ArrayRef<int64_t> sa = shapeOf(a), sc = shapeOf(c);
  SmallVector<int64_t> batch;
  OpTrait::util::getBroadcastedShape(sa.drop_back(2), sc.drop_back(2), batch);
  batch.push_back(sa[sa.size() - 2]);
  batch.push_back(sc.back());
  return b.create<MatMulOp>(loc, RankedTensorType::get(batch, elementOf(a)),
                            a, c);
}

Value GradBuilder::gemm(Value a, Value c, bool transA, bool transC,
                        double alpha) {
  int64_t m = transA ? shapeOf(a)[1] : shapeOf(a)[0];
  int64_t n = transC ? shapeOf(c)[0] : shapeOf(c)[1];
  auto type = RankedTensorType::get({m, n}, elementOf(a));
  return b.create<GemmOp>(loc, type, a, c, Value(), b.getBoolAttr(transA),
                          b.getBoolAttr(transC), b.getF64FloatAttr(alpha),
                          b.getF64FloatAttr(0.0));
}
