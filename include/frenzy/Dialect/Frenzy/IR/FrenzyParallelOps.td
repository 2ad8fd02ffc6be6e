//===- FrenzyParallelOps.td - tensor-parallel communication -*- tablegen -*-===//
//
// Megatron-LM's two conjugate operators, as ops so that autodiff derives the
// backward communication: `tp_copy` (f) is the identity forward and sums the
// gradient over the TP group backward; `tp_all_reduce` (g) sums over the TP
// group forward and is the identity backward. The frenzy-tensor-parallel
// pass puts f before each column-parallel matmul and g after each
// row-parallel one.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PARALLEL_OPS_TD
#define FRENZY_PARALLEL_OPS_TD

def Frenzy_TPCopyOp : Frenzy_Op<"tp_copy",
    [SameOperandsAndResultType, Frenzy_CostOpInterface, Grad]> {
  let summary = "identity forward; all-reduce of the gradient over the TP group";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Frenzy_TPAllReduceOp : Frenzy_Op<"tp_all_reduce",
    [SameOperandsAndResultType, Frenzy_CostOpInterface, Grad]> {
  let summary = "sum over the TP group forward; identity backward";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

#endif // FRENZY_PARALLEL_OPS_TD
