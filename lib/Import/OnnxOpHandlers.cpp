//===- OnnxOpHandlers.cpp - one converter per ONNX op and opset range -----===//
//
// Shape operands that ONNX passes as tensors (Reshape's shape, Slice's
// starts, Unsqueeze's axes since opset 13) were folded to host constants
// before emission; here they become attributes or the result type.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

using namespace mlir;

namespace frenzy::import {
namespace {
using Error = std::optional<ImportError>;

Error err(std::string msg) { return ImportError{std::move(msg)}; }

const onnx::AttributeProto *attr(const onnx::NodeProto &n, const char *name) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
int64_t intAttr(const onnx::NodeProto &n, const char *name, int64_t dflt) {
  const auto *a = attr(n, name);
  return a ? a->i() : dflt;
}
double floatAttr(const onnx::NodeProto &n, const char *name, double dflt) {
  const auto *a = attr(n, name);
  return a ? a->f() : dflt;
}
std::string stringAttr(const onnx::NodeProto &n, const char *name,
                       std::string dflt) {
  const auto *a = attr(n, name);
  return a ? a->s() : dflt;
}

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

std::optional<int64_t> normAxis(int64_t a, int64_t rank) {
  if (a < -rank || a >= rank)
    return std::nullopt;
  return a < 0 ? a + rank : a;
}

/// Axes from the attribute (older opsets) or a constant input (newer).
std::optional<std::vector<int64_t>> axesOf(GraphEmitter &e,
                                           const onnx::NodeProto &n,
                                           int inputIndex, std::string &why) {
  if (inputIndex >= 0 && inputIndex < n.input_size() &&
      !n.input(inputIndex).empty()) {
    const ConstantTensor *c = e.constant(n, inputIndex);
    std::optional<std::vector<int64_t>> axes = c ? c->toInts() : std::nullopt;
    if (!axes)
      why = c ? "more axes than any tensor has" : "axes must be a constant";
    return axes;
  }
  std::vector<int64_t> axes;
  if (const auto *a = attr(n, "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  return axes;
}

/// Appends `axes` made non-negative for `rank` to `norm`, sorted.
Error appendNormalisedAxes(ArrayRef<int64_t> axes, int64_t rank,
                           SmallVectorImpl<int64_t> &norm) {
  for (int64_t a : axes) {
    auto na = normAxis(a, rank);
    if (!na)
      return err("axis " + std::to_string(a) + " out of range");
    norm.push_back(*na);
  }
  llvm::sort(norm);
  return std::nullopt;
}

DenseI64ArrayAttr i64Array(GraphEmitter &e, ArrayRef<int64_t> v) {
  return e.builder().getDenseI64ArrayAttr(v);
}

template <typename OpTy> NodeHandler unary() {
  return [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
    return e.emitSimple<OpTy>(n, e.input(n, 0));
  };
}

template <typename OpTy> NodeHandler binary() {
  return [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
    if (n.input_size() != 2)
      return err("expects exactly two inputs");
    return e.emitSimple<OpTy>(n, e.input(n, 0), e.input(n, 1));
  };
}

Error reduce(GraphEmitter &e, const onnx::NodeProto &n, int axesInput,
             llvm::function_ref<void(GraphEmitter &, const onnx::NodeProto &,
                                     Value, ArrayRef<int64_t>, bool)>
                 build) {
  Value x = e.input(n, 0);
  std::string why;
  auto axes = axesOf(e, n, axesInput, why);
  if (!axes)
    return err(why);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> norm;
  if (axes->empty() && !intAttr(n, "noop_with_empty_axes", 0))
    for (int64_t i = 0; i < rank; ++i)
      norm.push_back(i);
  if (Error e = appendNormalisedAxes(*axes, rank, norm))
    return e;
  bool keep = intAttr(n, "keepdims", 1) != 0;
  build(e, n, x, norm, keep);
  return e.pendingError();
}

template <typename OpTy> auto reduceWith(int axesInput) {
  return [axesInput](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
    return reduce(e, n, axesInput,
                  [](GraphEmitter &e, const onnx::NodeProto &n, Value x,
                     ArrayRef<int64_t> axes, bool keep) {
                    e.emitSimple<OpTy>(n, x, i64Array(e, axes),
                                       e.builder().getBoolAttr(keep));
                  });
  };
}

template <typename OpTy> auto softmaxLike(bool coerced2d) {
  return [coerced2d](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
    Value x = e.input(n, 0);
    int64_t rank = rankOf(x);
    auto axis = normAxis(intAttr(n, "axis", coerced2d ? 1 : -1), rank);
    if (!axis)
      return err("axis out of range");
    // Before opset 13 softmax flattened dims [axis, rank) into one: only the
    // last-axis form means the same thing.
    if (coerced2d && *axis != rank - 1)
      return err("softmax over a non-last axis before opset 13 is not "
                 "supported; re-export with opset 13 or newer");
    return e.emitSimple<OpTy>(n, x, e.builder().getI64IntegerAttr(*axis));
  };
}

Error squeezeLike(GraphEmitter &e, const onnx::NodeProto &n, bool squeeze,
                  int axesInput) {
  Value x = e.input(n, 0);
  std::string why;
  auto axes = axesOf(e, n, axesInput, why);
  if (!axes)
    return err(why);
  int64_t rank = squeeze ? rankOf(x) : rankOf(x) + axes->size();
  SmallVector<int64_t> norm;
  if (squeeze && axes->empty()) {
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    for (int64_t i = 0; i < rank; ++i)
      if (shape[i] == 1)
        norm.push_back(i);
  }
  if (Error e = appendNormalisedAxes(*axes, rank, norm))
    return e;
  if (squeeze)
    return e.emitSimple<SqueezeOp>(n, x, i64Array(e, norm));
  return e.emitSimple<UnsqueezeOp>(n, x, i64Array(e, norm));
}

Error sliceOp(GraphEmitter &e, const onnx::NodeProto &n) {
  Value x = e.input(n, 0);
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t rank = shape.size();
  const ConstantTensor *s = e.constant(n, 1), *t = e.constant(n, 2);
  const ConstantTensor *ax = e.constant(n, 3), *st = e.constant(n, 4);
  if (!s || !t || (n.input_size() > 3 && !n.input(3).empty() && !ax) ||
      (n.input_size() > 4 && !n.input(4).empty() && !st))
    return err("starts, ends, axes and steps must fold to constants");
  auto starts = s->toInts(), ends = t->toInts();
  std::optional<std::vector<int64_t>> axes, steps;
  if (ax)
    axes = ax->toInts();
  else if (starts)
    for (axes.emplace(); axes->size() < starts->size();)
      axes->push_back(axes->size());
  if (st)
    steps = st->toInts();
  else if (starts)
    steps.emplace(starts->size(), 1);
  if (!starts || !ends || !axes || !steps || ends->size() != starts->size() ||
      axes->size() != starts->size() || steps->size() != starts->size())
    return err("starts, ends, axes and steps must have one entry per sliced "
               "axis");
  SmallVector<int64_t> b(rank, 0), l(shape.begin(), shape.end()), k(rank, 1);
  for (size_t i = 0; i < axes->size(); ++i) {
    auto a = normAxis((*axes)[i], rank);
    int64_t step = (*steps)[i];
    if (!a || step == 0)
      return err("bad axis or zero step");
    int64_t dim = shape[*a], lo = (*starts)[i], hi = (*ends)[i];
    lo = lo < 0 ? lo + dim : lo;
    hi = hi < 0 ? hi + dim : hi;
    if (step > 0) {
      lo = std::clamp<int64_t>(lo, 0, dim);
      hi = std::clamp<int64_t>(hi, 0, dim);
    } else if (dim == 0) { // [0, dim - 1] is empty: nothing is taken
      lo = 0;
      hi = 0;
    } else {
      lo = std::clamp<int64_t>(lo, 0, dim - 1);
      hi = std::clamp<int64_t>(hi, -1, dim - 1);
    }
    b[*a] = lo;
    l[*a] = hi;
    k[*a] = step;
  }
  return e.emitSimple<SliceOp>(n, x, i64Array(e, b), i64Array(e, l),
                               i64Array(e, k));
}

Error splitOp(GraphEmitter &e, const onnx::NodeProto &n) {
  Value x = e.input(n, 0);
  if (!x)
    return e.pendingError();
  auto axis = normAxis(intAttr(n, "axis", 0), rankOf(x));
  if (!axis)
    return err("axis out of range");
  SmallVector<Type> types;
  for (int i = 0; i < n.output_size(); ++i)
    types.push_back(e.outputType(n, i));
  auto op = e.builder().create<SplitOp>(e.loc(n), types, x,
                                        e.builder().getI64IntegerAttr(*axis));
  for (int i = 0; i < n.output_size(); ++i)
    e.bind(n.output(i), op.getResult(i));
  return e.pendingError();
}

Error dropoutOp(GraphEmitter &e, const onnx::NodeProto &n) {
  double ratio = floatAttr(n, "ratio", 0.5);
  if (const ConstantTensor *r = e.constant(n, 1)) {
    if (!r->firstValue())
      return err("dropout ratio is an empty tensor; it must be a scalar");
    ratio = *r->firstValue();
  } else if (n.input_size() > 1 && !n.input(1).empty()) {
    return err("dropout ratio must be a constant");
  }
  bool training = false;
  if (const ConstantTensor *t = e.constant(n, 2)) {
    if (!t->firstValue())
      return err("training_mode is an empty tensor; it must be a scalar");
    training = *t->firstValue() != 0;
  }
  return e.emitSimple<DropoutOp>(n, e.input(n, 0),
                                 e.builder().getF64FloatAttr(ratio),
                                 e.builder().getBoolAttr(training),
                                 e.builder().getI64IntegerAttr(0));
}

Error lossOp(GraphEmitter &e, const onnx::NodeProto &n) {
  if (n.output_size() > 1 && !n.output(1).empty())
    return err("the log_prob output is not supported; use only the loss");
  std::string reduction = stringAttr(n, "reduction", "mean");
  IntegerAttr ignore;
  if (const auto *a = attr(n, "ignore_index"))
    ignore = e.builder().getI64IntegerAttr(a->i());
  return e.emitSimple<SoftmaxCrossEntropyLossOp>(
      n, e.input(n, 0), e.input(n, 1), e.input(n, 2),
      e.builder().getStringAttr(reduction), ignore);
}

Error notFolded(GraphEmitter &e, const onnx::NodeProto &n) {
  // Shape and Size read only their input's type; the others need values.
  bool allConstant = n.op_type() != "Shape" && n.op_type() != "Size";
  for (int i = 0; i < n.input_size(); ++i)
    allConstant &= n.input(i).empty() || e.constant(n, i) != nullptr;
  if (allConstant)
    return err("could not be folded: its inputs are constants, but the "
               "result would have more than " +
               std::to_string(kMaxDenseFoldElements) +
               " elements or its inputs are malformed (an empty bound)");
  return err("could not be folded: its inputs are not static; bind the "
             "symbolic dims with --batch, --seq or --dim=NAME=VALUE");
}
} // namespace

const std::vector<HandlerEntry> &nodeHandlers() {
  constexpr int64_t kMax = 1000;
  static const std::vector<HandlerEntry> table = {
      {"Add", 7, kMax, binary<AddOp>()},
      {"Sub", 7, kMax, binary<SubOp>()},
      {"Mul", 7, kMax, binary<MulOp>()},
      {"Div", 7, kMax, binary<DivOp>()},
      {"Pow", 7, kMax, binary<PowOp>()},
      {"Max", 8, kMax, binary<MaxOp>()},
      {"Min", 8, kMax, binary<MinOp>()},
      {"And", 7, kMax, binary<AndOp>()},
      {"Or", 7, kMax, binary<OrOp>()},
      {"Equal", 7, kMax, binary<EqualOp>()},
      {"Less", 7, kMax, binary<LessOp>()},
      {"LessOrEqual", 12, kMax, binary<LessEqualOp>()},
      {"Greater", 7, kMax, binary<GreaterOp>()},
      {"GreaterOrEqual", 12, kMax, binary<GreaterEqualOp>()},
      {"Neg", 6, kMax, unary<NegOp>()},
      {"Abs", 6, kMax, unary<AbsOp>()},
      {"Exp", 6, kMax, unary<ExpOp>()},
      {"Log", 6, kMax, unary<LogOp>()},
      {"Sqrt", 6, kMax, unary<SqrtOp>()},
      {"Reciprocal", 6, kMax, unary<ReciprocalOp>()},
      {"Tanh", 6, kMax, unary<TanhOp>()},
      {"Erf", 9, kMax, unary<ErfOp>()},
      {"Sigmoid", 6, kMax, unary<SigmoidOp>()},
      {"Relu", 6, kMax, unary<ReluOp>()},
      {"Sin", 7, kMax, unary<SinOp>()},
      {"Cos", 7, kMax, unary<CosOp>()},
      {"Not", 1, kMax, unary<NotOp>()},
      {"Gelu", 20, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         return e.emitSimple<GeluOp>(
             n, e.input(n, 0),
             e.builder().getStringAttr(stringAttr(n, "approximate", "none")));
       }},
      {"MatMul", 9, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         return e.emitSimple<MatMulOp>(n, e.input(n, 0), e.input(n, 1));
       }},
      {"Gemm", 11, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         auto &b = e.builder();
         return e.emitSimple<GemmOp>(
             n, e.input(n, 0), e.input(n, 1), e.input(n, 2),
             b.getBoolAttr(intAttr(n, "transA", 0)),
             b.getBoolAttr(intAttr(n, "transB", 0)),
             b.getF64FloatAttr(floatAttr(n, "alpha", 1.0)),
             b.getF64FloatAttr(floatAttr(n, "beta", 1.0)));
       }},
      {"LayerNormalization", 17, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         Value x = e.input(n, 0);
         auto axis = normAxis(intAttr(n, "axis", -1), rankOf(x));
         if (!axis)
           return err("axis out of range");
         return e.emitSimple<LayerNormOp>(
             n, x, e.input(n, 1), e.input(n, 2),
             e.builder().getI64IntegerAttr(*axis),
             e.builder().getF64FloatAttr(floatAttr(n, "epsilon", 1e-5)));
       }},
      {"Softmax", 1, 12, softmaxLike<SoftmaxOp>(true)},
      {"Softmax", 13, kMax, softmaxLike<SoftmaxOp>(false)},
      {"LogSoftmax", 1, 12, softmaxLike<LogSoftmaxOp>(true)},
      {"LogSoftmax", 13, kMax, softmaxLike<LogSoftmaxOp>(false)},
      {"ReduceSum", 1, 12, reduceWith<ReduceSumOp>(-1)},
      {"ReduceSum", 13, kMax, reduceWith<ReduceSumOp>(1)},
      {"ReduceMean", 1, 17, reduceWith<ReduceMeanOp>(-1)},
      {"ReduceMean", 18, kMax, reduceWith<ReduceMeanOp>(1)},
      {"ReduceMax", 1, 17, reduceWith<ReduceMaxOp>(-1)},
      {"ReduceMax", 18, kMax, reduceWith<ReduceMaxOp>(1)},
      {"ReduceMin", 1, 17, reduceWith<ReduceMinOp>(-1)},
      {"ReduceMin", 18, kMax, reduceWith<ReduceMinOp>(1)},
      {"Transpose", 1, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         Value x = e.input(n, 0);
         SmallVector<int64_t> perm;
         if (const auto *a = attr(n, "perm"))
           perm.assign(a->ints().begin(), a->ints().end());
         else
           for (int64_t i = rankOf(x) - 1; i >= 0; --i)
             perm.push_back(i);
         // ONNX inference accepts some malformed perms (fuzzing found one
         // entry for a rank-2 input); the op verifier would fail without
         // naming the node.
         SmallVector<bool> seen(rankOf(x), false);
         bool ok = int64_t(perm.size()) == rankOf(x);
         for (int64_t p : perm) {
           ok = ok && p >= 0 && p < rankOf(x) && !seen[p];
           if (ok)
             seen[p] = true;
         }
         if (!ok)
           return err("perm must list each of the input's " +
                      std::to_string(rankOf(x)) + " axes once");
         return e.emitSimple<TransposeOp>(n, x, i64Array(e, perm));
       }},
      {"Reshape", 5, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         // ONNX inference does not always catch a target shape of another
         // size; the op verifier would, as an error without the node.
         auto from = cast<RankedTensorType>(e.input(n, 0).getType());
         auto to = e.outputType(n);
         if (from.getNumElements() != to.getNumElements())
           return ImportError{"Reshape to a shape of " +
                              std::to_string(to.getNumElements()) +
                              " elements from " +
                              std::to_string(from.getNumElements()) +
                              "; the model's shapes are inconsistent with "
                              "the bound dims (--batch, --seq, --dim)"};
         return e.emitSimple<ReshapeOp>(n, e.input(n, 0));
       }},
      {"Flatten", 1, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         return e.emitSimple<ReshapeOp>(n, e.input(n, 0));
       }},
      {"Expand", 8, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         return e.emitSimple<ExpandOp>(n, e.input(n, 0));
       }},
      {"Squeeze", 1, 12,
       [](GraphEmitter &e, const onnx::NodeProto &n) {
         return squeezeLike(e, n, true, -1);
       }},
      {"Squeeze", 13, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) {
         return squeezeLike(e, n, true, 1);
       }},
      {"Unsqueeze", 1, 12,
       [](GraphEmitter &e, const onnx::NodeProto &n) {
         return squeezeLike(e, n, false, -1);
       }},
      {"Unsqueeze", 13, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) {
         return squeezeLike(e, n, false, 1);
       }},
      {"Slice", 10, kMax, sliceOp},
      {"Concat", 4, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         SmallVector<Value> ins;
         for (int i = 0; i < n.input_size(); ++i)
           ins.push_back(e.input(n, i));
         auto axis = normAxis(intAttr(n, "axis", 0), rankOf(ins.front()));
         if (!axis)
           return err("axis out of range");
         // ONNX requires one element type; shape inference does not always
         // refuse a mix (fuzzing found int64 and int32 shape pieces).
         Type elem = cast<RankedTensorType>(ins.front().getType()).getElementType();
         for (Value v : ins)
           if (cast<RankedTensorType>(v.getType()).getElementType() != elem)
             return err("inputs of different element types; ONNX Concat "
                        "takes one type (insert a Cast)");
         return e.emitSimple<ConcatOp>(n, ins,
                                       e.builder().getI64IntegerAttr(*axis));
       }},
      {"Split", 2, kMax, splitOp},
      {"Gather", 1, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         Value data = e.input(n, 0);
         auto axis = normAxis(intAttr(n, "axis", 0), rankOf(data));
         if (!axis)
           return err("axis out of range");
         Value indices = e.input(n, 1);
         if (!isa<IntegerType>(
                 cast<RankedTensorType>(indices.getType()).getElementType()))
           return err("indices must be integers (int32 or int64)");
         return e.emitSimple<GatherOp>(n, data, indices,
                                       e.builder().getI64IntegerAttr(*axis));
       }},
      {"Where", 9, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         return e.emitSimple<WhereOp>(n, e.input(n, 0), e.input(n, 1),
                                      e.input(n, 2));
       }},
      {"Cast", 6, kMax, unary<CastOp>()},
      {"Trilu", 14, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         int64_t k = 0;
         if (const ConstantTensor *c = e.constant(n, 1)) {
           if (!c->firstValue())
             return err("k is an empty tensor; it must be a scalar");
           k = saturatingInt(*c->firstValue());
         } else if (n.input_size() > 1 && !n.input(1).empty())
           return err("k must be a constant");
         return e.emitSimple<TriluOp>(
             n, e.input(n, 0), e.builder().getBoolAttr(intAttr(n, "upper", 1)),
             e.builder().getI64IntegerAttr(k));
       }},
      {"Dropout", 12, kMax, dropoutOp},
      {"Identity", 1, kMax,
       [](GraphEmitter &e, const onnx::NodeProto &n) -> Error {
         e.bind(n.output(0), e.aliasOrDistinctParam(n));
         return e.pendingError();
       }},
      {"SoftmaxCrossEntropyLoss", 12, kMax, lossOp},
      {"Shape", 1, kMax, notFolded},
      {"Size", 1, kMax, notFolded},
      {"Range", 11, kMax, notFolded},
      {"ConstantOfShape", 9, kMax, notFolded},
  };
  return table;
}

} // namespace frenzy::import
