//===- MatchUtils.cpp - helpers for matching decomposed patterns ----------===//
#include "MatchUtils.h"

#include <cmath>

using namespace mlir;

namespace frenzy::fuse {

Value skipCasts(Value v) {
  while (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getInput();
  return v;
}

std::optional<double> splatValue(Value v) {
  auto c = skipCasts(v).getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !(dense.isSplat() || dense.getNumElements() == 1))
    return std::nullopt;
  if (isa<FloatType>(dense.getElementType()))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (isa<IntegerType>(dense.getElementType()))
    return double((*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

bool isConstant(Value v, double expected) {
  auto s = splatValue(v);
  if (!s)
    return false;
  if (expected == 0)
    return *s == 0;
  return std::fabs(*s - expected) <= 1e-3 * std::fabs(expected);
}

static void flatten(Value v, bool isRoot, SmallVectorImpl<Value> &factors,
                    double &scale, SmallVectorImpl<Operation *> *inner) {
  auto mul = v.getDefiningOp<MulOp>();
  if (mul && (isRoot || v.hasOneUse())) {
    if (!isRoot && inner)
      inner->push_back(mul);
    flatten(mul.getLhs(), false, factors, scale, inner);
    flatten(mul.getRhs(), false, factors, scale, inner);
    return;
  }
  if (auto c = splatValue(v)) {
    scale *= *c;
    return;
  }
  factors.push_back(v);
}

void flattenProduct(Value root, SmallVectorImpl<Value> &factors, double &scale,
                    SmallVectorImpl<Operation *> *inner) {
  scale = 1.0;
  flatten(root, true, factors, scale, inner);
}

bool isSquareOf(Value v, Value &x) {
  if (auto pow = v.getDefiningOp<PowOp>()) {
    if (!isConstant(pow.getRhs(), 2.0))
      return false;
    x = pow.getLhs();
    return true;
  }
  if (auto mul = v.getDefiningOp<MulOp>()) {
    if (mul.getLhs() != mul.getRhs())
      return false;
    x = mul.getLhs();
    return true;
  }
  return false;
}

bool isCubeOf(Value v, Value x) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getLhs() == x && isConstant(pow.getRhs(), 3.0);
  SmallVector<Value> factors;
  double scale;
  flattenProduct(v, factors, scale);
  return scale == 1.0 && factors.size() == 3 &&
         llvm::all_of(factors, [&](Value f) { return f == x; });
}

Value addConstant(Value v, double &c) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return {};
  if (auto s = splatValue(add.getRhs())) {
    c = *s;
    return add.getLhs();
  }
  if (auto s = splatValue(add.getLhs())) {
    c = *s;
    return add.getRhs();
  }
  return {};
}

Value trailingMean(Value v, int64_t &axis) {
  auto mean = v.getDefiningOp<ReduceMeanOp>();
  if (!mean || !mean.getKeepdims())
    return {};
  int64_t rank = cast<RankedTensorType>(mean.getInput().getType()).getRank();
  ArrayRef<int64_t> axes = mean.getAxes();
  if (axes.empty() || axes.back() != rank - 1)
    return {};
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return {};
  axis = axes.front();
  return mean.getInput();
}

} // namespace frenzy::fuse
