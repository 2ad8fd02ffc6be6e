//===- FrenzyOps.cpp - frenzy op verifiers and folders ---------------------===//
//
// Verifiers recompute each op's result shape from its operands and
// attributes, so a malformed module is reported at the op that is wrong rather
// than as a wrong number in a later analysis.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace frenzy;

namespace {
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return s;
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

/// Compares a result shape against the one the op's semantics give; dynamic
/// dims on either side match anything.
LogicalResult checkShape(Operation *op, ArrayRef<int64_t> expected,
                         ArrayRef<int64_t> actual, StringRef what = "result") {
  bool ok = expected.size() == actual.size();
  for (size_t i = 0; ok && i < expected.size(); ++i)
    ok = ShapedType::isDynamic(expected[i]) ||
         ShapedType::isDynamic(actual[i]) || expected[i] == actual[i];
  if (ok)
    return success();
  return op->emitOpError() << what << " shape " << shapeString(actual)
                           << " does not match the expected "
                           << shapeString(expected);
}

LogicalResult checkAxis(Operation *op, int64_t axis, int64_t rank,
                        StringRef name = "axis") {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << name << " " << axis
                             << " is out of range for rank " << rank
                             << " (axes are normalised to [0, rank))";
  return success();
}

LogicalResult checkNormalisedShape(Operation *op, Value input, Value scale,
                                   int64_t axis, double epsilon) {
  int64_t rank = rankOf(input);
  if (failed(checkAxis(op, axis, rank)))
    return failure();
  if (epsilon <= 0)
    return op->emitOpError("epsilon must be positive");
  ArrayRef<int64_t> normShape = shapeOf(input).drop_front(axis);
  SmallVector<int64_t> scaleShape(shapeOf(scale));
  // Scale broadcasts against the normalised dims from the right.
  if (scaleShape.size() > normShape.size())
    return op->emitOpError("scale has more dims than the normalised part");
  ArrayRef<int64_t> tail = normShape.take_back(scaleShape.size());
  return checkShape(op, tail, scaleShape, "scale");
}
} // namespace

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  StringRef storage = getStorage();
  if (storage != "inline" && storage != "constant" && storage != "external")
    return emitOpError("storage must be 'inline', 'constant' or 'external', "
                       "got '")
           << storage << "'";
  bool hasFile = getFile().has_value();
  if ((storage == "external") != hasFile)
    return emitOpError("a 'file' is given exactly when storage is 'external'");
  if (storage == "external" && (!getOffset() || !getLength()))
    return emitOpError("external storage needs 'offset' and 'length'");
  if (getName().empty())
    return emitOpError("parameter name must not be empty");
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError("parameter shape must be static");
  if (auto length = getLength()) {
    // The data is the whole tensor; a TP shard's type is 1/parts of it.
    int64_t want = tensorBytes(type);
    if (auto shard = (*this)->getAttrOfType<DenseI64ArrayAttr>("frenzy.shard"))
      if (shard.size() == 3 && shard[1] > 0)
        want *= shard[1];
    if (*length != want)
      return emitOpError("external data length ")
             << *length << " does not match the " << want
             << " bytes of the parameter type";
  }
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult CastOp::fold(FoldAdaptor) {
  // Exports cast bool masks to bool; such a cast is the identity.
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be 'none' or 'tanh'");
  return success();
}

LogicalResult DropoutOp::verify() {
  double r = getRatio().convertToDouble();
  if (r < 0 || r >= 1)
    return emitOpError("ratio must be in [0, 1)");
  ArrayRef<int64_t> s = getTpSplit();
  if (!s.empty() && (s.size() != 3 || s[0] < 0 || s[0] >= rankOf(getInput()) ||
                     s[1] < 1 || s[2] < 1 ||
                     cast<RankedTensorType>(getType()).getDimSize(s[0]) %
                         s[2]))
    return emitOpError("tp_split must be [dim, parts, blocks] with the "
                       "input's dim a multiple of blocks");
  return success();
}

LogicalResult TriluOp::verify() {
  if (rankOf(getInput()) < 2)
    return emitOpError("input must have rank >= 2");
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  SmallVector<int64_t> a(shapeOf(getLhs())), b(shapeOf(getRhs()));
  if (a.empty() || b.empty())
    return emitOpError("operands must have rank >= 1");
  bool vecA = a.size() == 1, vecB = b.size() == 1;
  if (vecA)
    a.insert(a.begin(), 1);
  if (vecB)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return emitOpError("contraction dims differ: ") << k1 << " vs " << k2;
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(ArrayRef(a).drop_back(2),
                                          ArrayRef(b).drop_back(2), batch))
    return emitOpError("batch dims do not broadcast");
  SmallVector<int64_t> expected(batch);
  if (!vecA)
    expected.push_back(a[a.size() - 2]);
  if (!vecB)
    expected.push_back(b.back());
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult GemmOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getA()), b = shapeOf(getB());
  if (a.size() != 2 || b.size() != 2)
    return emitOpError("a and b must be 2-d");
  int64_t m = getTransA() ? a[1] : a[0], ka = getTransA() ? a[0] : a[1];
  int64_t kb = getTransB() ? b[1] : b[0], n = getTransB() ? b[0] : b[1];
  if (ka != kb)
    return emitOpError("contraction dims differ: ") << ka << " vs " << kb;
  return checkShape(*this, {m, n}, shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax, loss, attention
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  if (failed(checkNormalisedShape(*this, getInput(), getScale(), getAxis(),
                                  getEpsilon().convertToDouble())))
    return failure();
  return checkShape(*this, shapeOf(getInput()), shapeOf(getResult()));
}

LogicalResult RMSNormOp::verify() {
  if (failed(checkNormalisedShape(*this, getInput(), getScale(), getAxis(),
                                  getEpsilon().convertToDouble())))
    return failure();
  return checkShape(*this, shapeOf(getInput()), shapeOf(getResult()));
}

LogicalResult SoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), rankOf(getInput()));
}
LogicalResult LogSoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), rankOf(getInput()));
}

LogicalResult AttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQ()), k = shapeOf(getK()),
                    v = shapeOf(getV());
  if (q.size() < 2 || q.size() != k.size() || q.size() != v.size())
    return emitOpError("q, k and v must have the same rank >= 2");
  if (q.back() != k.back())
    return emitOpError("q and k head dims differ: ")
           << q.back() << " vs " << k.back();
  if (k[k.size() - 2] != v[v.size() - 2])
    return emitOpError("k and v sequence lengths differ");
  SmallVector<int64_t> expected(q.drop_back());
  expected.push_back(v.back());
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult SoftmaxCrossEntropyLossOp::verify() {
  StringRef r = getReduction();
  if (r != "mean" && r != "sum" && r != "none")
    return emitOpError("reduction must be 'mean', 'sum' or 'none'");
  ArrayRef<int64_t> logits = shapeOf(getLogits()), labels = shapeOf(getLabels());
  if (logits.size() < 2 || labels.size() + 1 != logits.size())
    return emitOpError("logits must be [N, C, d...] and labels [N, d...]");
  SmallVector<int64_t> expectLabels{logits[0]};
  expectLabels.append(logits.begin() + 2, logits.end());
  if (failed(checkShape(*this, expectLabels, labels, "labels")))
    return failure();
  if (r == "none")
    return checkShape(*this, labels, shapeOf(getResult()));
  return checkShape(*this, {}, shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduce(Operation *op, Value input, Value result,
                                  ArrayRef<int64_t> axes, bool keepdims) {
  int64_t rank = rankOf(input);
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    if (failed(checkAxis(op, a, rank)))
      return failure();
    reduced[a] = true;
  }
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      expected.push_back(shapeOf(input)[i]);
    else if (keepdims)
      expected.push_back(1);
  }
  return checkShape(op, expected, shapeOf(result));
}

#define FRENZY_REDUCE_VERIFIER(OP)                                             \
  LogicalResult OP::verify() {                                                 \
    return verifyReduce(*this, getInput(), getResult(), getAxes(),             \
                        getKeepdims());                                        \
  }
FRENZY_REDUCE_VERIFIER(ReduceSumOp)
FRENZY_REDUCE_VERIFIER(ReduceMeanOp)
FRENZY_REDUCE_VERIFIER(ReduceMaxOp)
FRENZY_REDUCE_VERIFIER(ReduceMinOp)
#undef FRENZY_REDUCE_VERIFIER

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> perm = getPerm(), in = shapeOf(getInput());
  if (perm.size() != in.size())
    return emitOpError("perm has ") << perm.size() << " entries for rank "
                                    << in.size();
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOpError("perm is not a permutation");
    seen[p] = true;
    expected.push_back(in[p]);
  }
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("reshape from ")
           << shapeString(in.getShape()) << " to " << shapeString(out.getShape())
           << " changes the element count";
  return success();
}

LogicalResult ExpandOp::verify() {
  SmallVector<int64_t> out;
  if (!OpTrait::util::getBroadcastedShape(shapeOf(getInput()),
                                          shapeOf(getResult()), out))
    return emitOpError("input does not broadcast to the result shape");
  return checkShape(*this, out, shapeOf(getResult()));
}

LogicalResult SqueezeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  SmallVector<bool> drop(in.size(), false);
  for (int64_t a : getAxes()) {
    if (failed(checkAxis(*this, a, in.size())))
      return failure();
    if (in[a] != 1)
      return emitOpError("cannot squeeze dim ") << a << " of size " << in[a];
    drop[a] = true;
  }
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i])
      expected.push_back(in[i]);
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult UnsqueezeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t outRank = in.size() + getAxes().size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : getAxes()) {
    if (failed(checkAxis(*this, a, outRank)))
      return failure();
    inserted[a] = true;
  }
  SmallVector<int64_t> expected;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    expected.push_back(inserted[i] ? 1 : in[next++]);
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits(),
                    strides = getStrides();
  if (starts.size() != in.size() || limits.size() != in.size() ||
      strides.size() != in.size())
    return emitOpError("starts, limits and strides need one entry per dim");
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < in.size(); ++i) {
    if (strides[i] == 0)
      return emitOpError("stride must not be zero");
    int64_t n = strides[i] > 0
                    ? (limits[i] - starts[i] + strides[i] - 1) / strides[i]
                    : (starts[i] - limits[i] - strides[i] - 1) / -strides[i];
    expected.push_back(std::max<int64_t>(0, n));
  }
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  SmallVector<int64_t> expected(shapeOf(getInputs().front()));
  if (failed(checkAxis(*this, getAxis(), expected.size())))
    return failure();
  for (Value v : getInputs().drop_front()) {
    ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() != expected.size())
      return emitOpError("inputs differ in rank");
    expected[getAxis()] += s[getAxis()];
  }
  return checkShape(*this, expected, shapeOf(getResult()));
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (failed(checkAxis(*this, getAxis(), in.size())))
    return failure();
  int64_t total = 0;
  for (Value r : getResults()) {
    SmallVector<int64_t> expected(in);
    expected[getAxis()] = shapeOf(r)[getAxis()];
    if (failed(checkShape(*this, expected, shapeOf(r))))
      return failure();
    total += shapeOf(r)[getAxis()];
  }
  if (total != in[getAxis()])
    return emitOpError("split sizes add up to ")
           << total << ", not the input's " << in[getAxis()];
  return success();
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  if (failed(checkAxis(*this, getAxis(), data.size())))
    return failure();
  if (!isa<IntegerType>(getIndices().getType().getElementType()))
    return emitOpError("indices must be integers");
  SmallVector<int64_t> expected(data.begin(), data.begin() + getAxis());
  expected.append(idx.begin(), idx.end());
  expected.append(data.begin() + getAxis() + 1, data.end());
  return checkShape(*this, expected, shapeOf(getResult()));
}

#define GET_OP_CLASSES
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.cpp.inc"
