//===- SequenceParallel.h - shard a TP rank's blocks by tokens --*- C++ -*-===//
//
// The second half of frenzy-tensor-parallel with sequence-parallel=true
// (SequenceParallel.cpp): on a function already split for TP, runs the
// token-wise regions of the layers on this rank's chunk of the tokens.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TRANSFORMS_PARALLEL_SEQUENCEPARALLEL_H
#define FRENZY_TRANSFORMS_PARALLEL_SEQUENCEPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace frenzy {

/// Shards `func`'s layers by tokens over a TP group of `degree` ranks; an
/// error at the op whose tokens do not divide by the degree.
mlir::LogicalResult shardSequence(mlir::func::FuncOp func, int64_t degree);

} // namespace frenzy

#endif
