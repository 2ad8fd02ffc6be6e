//===- FrenzyOps.td - frenzy dialect operations -----------*- tablegen -*-===//
//
// Operations for what real transformer exports contain (GPT-2, Llama, BERT as
// written by torch.onnx.export at opsets 14 and 17), plus fused forms that the
// fuse pass recognises. All tensors are ranked and, after import, static.
// Axes attributes are always normalised to non-negative values.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_OPS_TD
#define FRENZY_OPS_TD

include "frenzy/Dialect/Frenzy/IR/FrenzyBase.td"
include "frenzy/Dialect/Frenzy/IR/FrenzyInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpBase.td"

class Frenzy_Op<string mnemonic, list<Trait> traits = []>
    : Op<Frenzy_Dialect, mnemonic, !listconcat(traits, [Pure])>;

// Ops whose flop count is not one per result element declare getFlops.
defvar FlopsOverride = DeclareOpInterfaceMethods<Frenzy_CostOpInterface, ["getFlops"]>;
// Ops with a reverse-mode rule (lib/Dialect/Frenzy/IR/Gradients/).
defvar Grad = DeclareOpInterfaceMethods<Frenzy_GradientOpInterface>;

//===----------------------------------------------------------------------===//
// Values: parameters and small constants
//===----------------------------------------------------------------------===//

def Frenzy_ParamOp : Frenzy_Op<"param", [FlopsOverride]> {
  let summary = "a model parameter or buffer, referenced by name, never copied";
  let description = [{
    Names a weight of the model. `storage` says where its bytes live:
    `inline` (an ONNX initializer inside the model file), `constant` (the
    value of a Constant node of that name) or `external` (ONNX external data:
    `file`, `offset`, `length`). `trainable` marks tensors that receive
    gradients; buffers (masks, rotary tables) carry no `trainable`.
    Tied or deduplicated weights are a single param op with several uses.
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$storage,
                   OptionalAttr<StrAttr>:$file, OptionalAttr<I64Attr>:$offset,
                   OptionalAttr<I64Attr>:$length, UnitAttr:$trainable,
                   OptionalAttr<StrAttr>:$value_from);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Frenzy_ConstantOp : Frenzy_Op<"constant",
    [ConstantLike, AllTypesMatch<["value", "result"]>, FlopsOverride]> {
  let summary = "a small constant tensor (scalars, masks values, shapes)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Frenzy_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Frenzy_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Frenzy_NegOp : Frenzy_UnaryOp<"neg", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_AbsOp : Frenzy_UnaryOp<"abs", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_ExpOp : Frenzy_UnaryOp<"exp", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_LogOp : Frenzy_UnaryOp<"log", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_SqrtOp : Frenzy_UnaryOp<"sqrt", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_ReciprocalOp : Frenzy_UnaryOp<"reciprocal", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_TanhOp : Frenzy_UnaryOp<"tanh", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_ErfOp : Frenzy_UnaryOp<"erf", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_SigmoidOp : Frenzy_UnaryOp<"sigmoid", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_ReluOp : Frenzy_UnaryOp<"relu", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_SinOp : Frenzy_UnaryOp<"sin", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_CosOp : Frenzy_UnaryOp<"cos", [Frenzy_CostOpInterface, Grad]>;
def Frenzy_NotOp : Frenzy_UnaryOp<"not", [Frenzy_CostOpInterface]>;
def Frenzy_SiluOp : Frenzy_UnaryOp<"silu", [FlopsOverride, Grad]> {
  let summary = "x * sigmoid(x) (fused)";
}
def Frenzy_GeluOp : Frenzy_Op<"gelu", [SameOperandsAndResultType, FlopsOverride, Grad]> {
  let summary = "GELU (fused); approximate is \"none\" (erf) or \"tanh\"";
  let arguments = (ins AnyRankedTensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

// Binary ops broadcast numpy-style (ONNX multidirectional broadcasting).
class Frenzy_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Frenzy_Op<mnemonic, !listconcat(traits,
                  [ResultsBroadcastableShape, Frenzy_CostOpInterface])> {
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Frenzy_AddOp : Frenzy_BinaryOp<"add", [SameOperandsAndResultElementType, Grad]>;
def Frenzy_SubOp : Frenzy_BinaryOp<"sub", [SameOperandsAndResultElementType, Grad]>;
def Frenzy_MulOp : Frenzy_BinaryOp<"mul", [SameOperandsAndResultElementType, Grad]>;
def Frenzy_DivOp : Frenzy_BinaryOp<"div", [SameOperandsAndResultElementType, Grad]>;
def Frenzy_PowOp : Frenzy_BinaryOp<"pow", [Grad]>;
def Frenzy_MaxOp : Frenzy_BinaryOp<"max", [SameOperandsAndResultElementType, Grad]>;
def Frenzy_MinOp : Frenzy_BinaryOp<"min", [SameOperandsAndResultElementType, Grad]>;
def Frenzy_AndOp : Frenzy_BinaryOp<"and", [SameOperandsAndResultElementType]>;
def Frenzy_OrOp : Frenzy_BinaryOp<"or", [SameOperandsAndResultElementType]>;

class Frenzy_CompareOp<string mnemonic>
    : Frenzy_BinaryOp<mnemonic, [SameOperandsElementType]> {
  let results = (outs TensorOf<[I1]>:$result);
}
def Frenzy_EqualOp : Frenzy_CompareOp<"equal">;
def Frenzy_LessOp : Frenzy_CompareOp<"less">;
def Frenzy_LessEqualOp : Frenzy_CompareOp<"less_equal">;
def Frenzy_GreaterOp : Frenzy_CompareOp<"greater">;
def Frenzy_GreaterEqualOp : Frenzy_CompareOp<"greater_equal">;

def Frenzy_WhereOp : Frenzy_Op<"where",
    [ResultsBroadcastableShape, Frenzy_CostOpInterface, Grad]> {
  let summary = "select x where cond is true, else y (broadcasting)";
  let arguments = (ins TensorOf<[I1]>:$cond, AnyRankedTensor:$x,
                   AnyRankedTensor:$y);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$cond `,` $x `,` $y attr-dict `:` functional-type(operands, results)";
}

def Frenzy_CastOp : Frenzy_Op<"cast", [SameOperandsAndResultShape,
                                       Frenzy_CostOpInterface, Grad]> {
  let summary = "element type conversion";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Frenzy_DropoutOp : Frenzy_Op<"dropout",
    [SameOperandsAndResultType, Frenzy_CostOpInterface, Grad]> {
  let summary = "dropout; a no-op unless training";
  let description = [{
    `seed` names the random stream: the runtime draws element i's keep
    decision from (seed, step, i), so the backward pass (the same op on the
    gradient, with the same seed) regenerates the mask instead of storing it.
    The autodiff pass gives every training dropout a distinct seed.
    `tp_split` = [dim, parts, blocks] (frenzy-tensor-parallel): the input is
    one TP rank's share of a tensor split along `dim` (viewed as [blocks,
    parts, n], rank r holds [:, r, :]); i is then the element's index in
    the unsplit tensor, so every rank drops what one rank would.
  }];
  let arguments = (ins AnyRankedTensor:$input, F64Attr:$ratio,
                   BoolAttr:$training,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$tp_split);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Frenzy_TriluOp : Frenzy_Op<"trilu",
    [SameOperandsAndResultType, Frenzy_CostOpInterface, Grad]> {
  let summary = "keep the upper or lower triangle of the last two dims";
  let arguments = (ins AnyRankedTensor:$input, BoolAttr:$upper, I64Attr:$k);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Frenzy_MatMulOp : Frenzy_Op<"matmul", [FlopsOverride, Grad]> {
  let summary = "numpy matmul: batched, broadcasting leading dims";
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_GemmOp : Frenzy_Op<"gemm", [FlopsOverride, Grad]> {
  let summary = "alpha * op(a) * op(b) + beta * c on 2-d tensors";
  let arguments = (ins AnyRankedTensor:$a, AnyRankedTensor:$b,
                   Optional<AnyRankedTensor>:$c, BoolAttr:$transA,
                   BoolAttr:$transB, F64Attr:$alpha, F64Attr:$beta);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax, loss, attention
//===----------------------------------------------------------------------===//

def Frenzy_LayerNormOp : Frenzy_Op<"layer_norm", [FlopsOverride, Grad]> {
  let summary = "layer normalisation over dims [axis, rank)";
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$scale,
                   Optional<AnyRankedTensor>:$bias, I64Attr:$axis,
                   F64Attr:$epsilon);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_RMSNormOp : Frenzy_Op<"rms_norm", [FlopsOverride, Grad]> {
  let summary = "x * rsqrt(mean(x^2 over dims [axis, rank)) + eps) * scale";
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$scale,
                   I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

class Frenzy_SoftmaxBase<string mnemonic>
    : Frenzy_Op<mnemonic, [SameOperandsAndResultType, FlopsOverride, Grad]> {
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}
def Frenzy_SoftmaxOp : Frenzy_SoftmaxBase<"softmax">;
def Frenzy_LogSoftmaxOp : Frenzy_SoftmaxBase<"log_softmax">;

def Frenzy_SwiGLUOp : Frenzy_Op<"swiglu",
    [SameOperandsAndResultType, FlopsOverride, Grad]> {
  let summary = "silu(gate) * up (fused)";
  let arguments = (ins AnyRankedTensor:$gate, AnyRankedTensor:$up);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Frenzy_AttentionOp : Frenzy_Op<"attention", [FlopsOverride, Grad]> {
  let summary = "softmax(q k^T * scale + mask) v (fused)";
  let description = [{
    q: [..., Tq, D], k: [..., Tk, D], v: [..., Tk, Dv] -> [..., Tq, Dv].
    `mask`, when present, is either boolean (true = masked out, filled with
    -inf) or additive (added to the scores); it broadcasts to the scores.
    `causal` records that the mask is the causal one when the importer could
    tell; cost and memory do not depend on it. `tp_parts` > 1: the op holds
    one TP rank's share of the heads (frenzy-tensor-parallel), which the
    runtime needs to draw the dropout decisions of the unsplit op.
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                   AnyRankedTensor:$v, Optional<AnyRankedTensor>:$mask,
                   F64Attr:$scale, UnitAttr:$causal,
                   DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   DefaultValuedAttr<I64Attr, "1">:$tp_parts);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$q `,` $k `,` $v (`,` $mask^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_SoftmaxCrossEntropyLossOp
    : Frenzy_Op<"softmax_cross_entropy_loss", [FlopsOverride, Grad]> {
  let summary = "mean/sum/none cross-entropy of logits [N, C, ...] and labels";
  let arguments = (ins AnyRankedTensor:$logits, AnyRankedTensor:$labels,
                   Optional<AnyRankedTensor>:$weights,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$logits `,` $labels (`,` $weights^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Frenzy_ReduceOp<string mnemonic, list<Trait> traits = []>
    : Frenzy_Op<mnemonic, !listconcat(traits,
                  [SameOperandsAndResultElementType, FlopsOverride])> {
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes,
                   BoolAttr:$keepdims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}
def Frenzy_ReduceSumOp : Frenzy_ReduceOp<"reduce_sum", [Grad]>;
def Frenzy_ReduceMeanOp : Frenzy_ReduceOp<"reduce_mean", [Grad]>;
def Frenzy_ReduceMaxOp : Frenzy_ReduceOp<"reduce_max">;
def Frenzy_ReduceMinOp : Frenzy_ReduceOp<"reduce_min">;

//===----------------------------------------------------------------------===//
// Data movement (static shapes: the result type carries the shape)
//===----------------------------------------------------------------------===//

class Frenzy_MoveOp<string mnemonic, list<Trait> traits = []>
    : Frenzy_Op<mnemonic, !listconcat(traits,
                  [SameOperandsAndResultElementType, FlopsOverride, Grad])>;

def Frenzy_TransposeOp : Frenzy_MoveOp<"transpose"> {
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_ReshapeOp : Frenzy_MoveOp<"reshape"> {
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_ExpandOp : Frenzy_MoveOp<"expand"> {
  let summary = "broadcast to the result shape";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_SqueezeOp : Frenzy_MoveOp<"squeeze"> {
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_UnsqueezeOp : Frenzy_MoveOp<"unsqueeze"> {
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_SliceOp : Frenzy_MoveOp<"slice"> {
  let summary = "strided slice; starts/limits/strides given for every dim";
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_ConcatOp : Frenzy_MoveOp<"concat"> {
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_SplitOp : Frenzy_MoveOp<"split"> {
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_GatherOp : Frenzy_Op<"gather",
    [DeclareOpInterfaceMethods<Frenzy_CostOpInterface, ["getFlops", "getBytesRead"]>,
     Grad]> {
  let summary = "take slices of data along axis at integer indices";
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

include "frenzy/Dialect/Frenzy/IR/FrenzyTrainOps.td"
include "frenzy/Dialect/Frenzy/IR/FrenzyParallelOps.td"

#endif // FRENZY_OPS_TD
