//===- FrenzyTrainOps.td - backward and optimizer ops -----*- tablegen -*-===//
//
// Ops that only the training graph contains: the backward kernels whose
// decomposition into forward ops would cost memory or accuracy (norm, softmax,
// attention, loss, scatter), and the optimizer. The autodiff pass emits the
// former, the optimizer pass the latter. Each backward op takes the forward
// values it needs as operands, so the set of activations saved for backward
// is read directly off the graph.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TRAIN_OPS_TD
#define FRENZY_TRAIN_OPS_TD

//===----------------------------------------------------------------------===//
// Backward kernels
//===----------------------------------------------------------------------===//

def Frenzy_UnbroadcastOp : Frenzy_Op<"unbroadcast", [Frenzy_CostOpInterface]> {
  let summary = "sum over the dims that broadcasting added or stretched";
  let description = [{
    The adjoint of broadcasting the result shape to the input shape: the
    gradient of an operand that a binary op broadcast.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Frenzy_LayerNormGradOp : Frenzy_Op<"layer_norm_grad",
    [Frenzy_CostOpInterface]> {
  let summary = "dx, dscale, dbias of layer_norm (mean and rstd recomputed)";
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$input,
                   AnyRankedTensor:$scale, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs AnyRankedTensor:$dinput, AnyRankedTensor:$dscale,
                      AnyRankedTensor:$dbias);
  let assemblyFormat = "$grad `,` $input `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
}

def Frenzy_RMSNormGradOp : Frenzy_Op<"rms_norm_grad", [Frenzy_CostOpInterface]> {
  let summary = "dx, dscale of rms_norm";
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$input,
                   AnyRankedTensor:$scale, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs AnyRankedTensor:$dinput, AnyRankedTensor:$dscale);
  let assemblyFormat = "$grad `,` $input `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
}

def Frenzy_SoftmaxGradOp : Frenzy_Op<"softmax_grad",
    [SameOperandsAndResultType, Frenzy_CostOpInterface]> {
  let summary = "dx of softmax (log = false) or log_softmax (log = true) from "
                "the forward output";
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$output,
                   I64Attr:$axis, BoolAttr:$log);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def Frenzy_ActivationGradOp : Frenzy_Op<"activation_grad",
    [SameOperandsAndResultType, Frenzy_CostOpInterface]> {
  let summary = "dx of a fused activation from its input: kind is "
                "gelu_tanh, gelu_erf or silu";
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$input,
                   StrAttr:$kind);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Frenzy_AttentionGradOp : Frenzy_Op<"attention_grad", [FlopsOverride]> {
  let summary = "dq, dk, dv of attention; the probabilities are recomputed";
  let description = [{
    Takes q, k, v (and the mask) rather than the saved probabilities, the
    way memory-efficient attention kernels do: the Tq x Tk score matrix is
    never kept between forward and backward.
  }];
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$q,
                   AnyRankedTensor:$k, AnyRankedTensor:$v,
                   Optional<AnyRankedTensor>:$mask, F64Attr:$scale,
                   UnitAttr:$causal, DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   DefaultValuedAttr<I64Attr, "1">:$tp_parts);
  let results = (outs AnyRankedTensor:$dq, AnyRankedTensor:$dk,
                      AnyRankedTensor:$dv);
  let assemblyFormat = "$grad `,` $q `,` $k `,` $v (`,` $mask^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def Frenzy_CrossEntropyGradOp : Frenzy_Op<"cross_entropy_grad",
    [Frenzy_CostOpInterface]> {
  let summary = "dlogits of softmax_cross_entropy_loss (mean or sum)";
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$logits,
                   AnyRankedTensor:$labels, StrAttr:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$grad `,` $logits `,` $labels attr-dict `:` "
                       "functional-type(operands, results)";
}

def Frenzy_GatherGradOp : Frenzy_Op<"gather_grad", [Frenzy_CostOpInterface]> {
  let summary = "scatter-add of the gathered gradient into zeros of the "
                "data shape (repeated indices accumulate)";
  let arguments = (ins AnyRankedTensor:$grad, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
}

def Frenzy_SliceGradOp : Frenzy_Op<"slice_grad", [Frenzy_CostOpInterface]> {
  let summary = "zeros of the input shape with the slice's gradient put back";
  let arguments = (ins AnyRankedTensor:$grad, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def Frenzy_ClipGradNormOp : Frenzy_Op<"clip_grad_norm",
    [Frenzy_CostOpInterface]> {
  let summary = "global L2 norm of all gradients and the factor that clips it";
  let description = [{
    norm = sqrt(sum of squares of every gradient); scale = min(1,
    max_norm / (norm + 1e-6)), which the update ops multiply into each
    gradient. max_norm = 0 disables clipping (scale = 1) but the norm is
    still computed for the progress output.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$grads, F64Attr:$max_norm);
  let results = (outs 0DTensorOf<[F32]>:$norm, 0DTensorOf<[F32]>:$scale);
  let assemblyFormat = "$grads attr-dict `:` functional-type(operands, results)";
}

// Updates write the parameter and its optimizer state in place: they are the
// only ops with side effects. Hyper-parameters shared by all parameters (lr
// schedule, betas, eps, momentum) live in the module's `frenzy.optimizer`
// dictionary; what differs per parameter (weight decay) is on the op.
class Frenzy_UpdateOp<string mnemonic>
    : Op<Frenzy_Dialect, mnemonic,
         [MemoryEffects<[MemWrite]>, Frenzy_CostOpInterface]> {
  let arguments = (ins AnyRankedTensor:$param, AnyRankedTensor:$grad,
                   0DTensorOf<[F32]>:$scale, StrAttr:$name,
                   F64Attr:$weight_decay);
  let assemblyFormat = "$param `,` $grad `,` $scale attr-dict `:` "
                       "type($param) `,` type($grad) `,` type($scale)";
  let hasVerifier = 1;
}
def Frenzy_AdamWUpdateOp : Frenzy_UpdateOp<"adamw_update"> {
  let summary = "one AdamW step on a parameter (two moments of state)";
}
def Frenzy_SGDUpdateOp : Frenzy_UpdateOp<"sgd_update"> {
  let summary = "one SGD-with-momentum step on a parameter (one buffer)";
}

#endif // FRENZY_TRAIN_OPS_TD
