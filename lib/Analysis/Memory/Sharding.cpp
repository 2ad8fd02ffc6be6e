//===- Sharding.cpp - which values tensor parallelism splits --------------===//
//
// Megatron-LM's split falls out of one rule on matmuls once the weights are
// marked: a product with exactly one split operand is split (column-parallel:
// replicated input times a column block; or a weight gradient), a product of
// two split operands contracts over the split dim and is replicated after
// the all-reduce (row-parallel; or the input gradient of a column-parallel
// layer). Other ops pass a split on from any split operand, scalars are never
// split, and an embedding lookup from a vocabulary-split table is replicated
// (its all-reduce). Weights: every 2-d matrix a matmul or gemm multiplies by,
// directly or through a transpose. A 1-d parameter added to a split value
// (a column-parallel bias) is split too.
//
//===----------------------------------------------------------------------===//
#include "Sharding.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

using namespace mlir;
using namespace frenzy;

static bool isFloat(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// The parameter behind a matmul operand (through transposes).
static ParamOp weightParam(Value v) {
  while (auto t = v.getDefiningOp<TransposeOp>())
    v = t.getInput();
  auto p = v.getDefiningOp<ParamOp>();
  return p && rankOf(p.getResult()) == 2 && p.getTrainable() ? p : ParamOp();
}

DenseSet<Value> frenzy::shardedValues(func::FuncOp func) {
  DenseSet<Value> split;
  Block &body = func.getBody().front();
  for (Operation &op : body)
    if (isa<MatMulOp, GemmOp>(op) && !op.hasAttr("frenzy.backward"))
      if (ParamOp p = weightParam(op.getOperand(1)))
        split.insert(p.getResult());

  for (Operation &op : body) {
    if (isa<ParamOp, ConstantOp>(op))
      continue;
    bool out = false;
    if (isa<MatMulOp, GemmOp>(op)) {
      int n = split.count(op.getOperand(0)) + split.count(op.getOperand(1));
      out = n == 1;
    } else if (isa<GatherOp>(op)) {
      out = false;
    } else {
      for (Value v : op.getOperands())
        out |= split.count(v) > 0;
    }
    if (!out)
      continue;
    for (Value r : op.getResults())
      if (isFloat(r) && rankOf(r) > 0)
        split.insert(r);
    // A 1-d parameter combined with a split value lives split.
    if (isa<AddOp, SubOp, MulOp>(op))
      for (Value v : op.getOperands())
        if (auto p = v.getDefiningOp<ParamOp>())
          if (rankOf(p.getResult()) == 1 && p.getTrainable())
            split.insert(p.getResult());
  }
  return split;
}
