//===- FrenzyParallelOps.td - tensor-parallel communication -*- tablegen -*-===//
//
// Megatron-LM's two conjugate operators, as ops so that autodiff derives the
// backward communication: `tp_copy` (f) is the identity forward and sums the
// gradient over the TP group backward; `tp_all_reduce` (g) sums over the TP
// group forward and is the identity backward. The frenzy-tensor-parallel
// pass puts f before each column-parallel matmul and g after each
// row-parallel one.
//
// Sequence parallelism (Megatron-LM's, Korthikanti et al.) adds two more
// conjugate pairs, over the tokens of an activation: its dims but the last
// flattened to [tokens, hidden], rank r of the TP group holding the r-th
// contiguous chunk of the tokens (the order MPI_Allgather and
// MPI_Reduce_scatter concatenate in, whatever the leading dims). A sharded
// value's type keeps the rank; its leading dims are divided by the degree
// (SequenceParallel.cpp says how), which only names the chunk's size.
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

class Frenzy_SPOp<string mnemonic, string what>
    : Frenzy_Op<mnemonic, [Frenzy_CostOpInterface, Grad]> {
  let summary = what;
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Frenzy_SPScatterOp : Frenzy_SPOp<"sp_scatter",
    "this rank's chunk of the tokens forward; all-gather backward"> {
  let description = [{
    Where a sequence-parallel region starts on a replicated value: every
    rank holds the whole value and keeps its own chunk (no communication);
    the gradient, each rank's chunk, is all-gathered back.
  }];
}

def Frenzy_SPGatherOp : Frenzy_SPOp<"sp_gather",
    "all-gather of the tokens forward; this rank's chunk backward"> {
  let description = [{
    Where a sequence-parallel region ends: the chunks are all-gathered into
    the replicated value; its gradient is the same on every rank, of which
    each keeps its chunk.
  }];
}

def Frenzy_SPAllGatherOp : Frenzy_SPOp<"sp_all_gather",
    "all-gather of the tokens forward; reduce-scatter backward"> {
  let description = [{
    Before a column-parallel matmul (in place of tp_copy): the matmul needs
    every token; each rank's input gradient is a partial sum over its
    column block, so the backward sums it and keeps this rank's chunk.
  }];
}

def Frenzy_SPReduceScatterOp : Frenzy_SPOp<"sp_reduce_scatter",
    "sum over the TP group keeping this rank's tokens forward; all-gather "
    "backward"> {
  let description = [{
    After a row-parallel matmul (in place of tp_all_reduce): the partial
    sums are added and each rank keeps its chunk of the tokens.
  }];
}

#endif // FRENZY_PARALLEL_OPS_TD
