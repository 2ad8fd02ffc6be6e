//===- Sharding.h - which values tensor parallelism splits ------*- C++ -*-===//
#ifndef FRENZY_LIB_ANALYSIS_MEMORY_SHARDING_H
#define FRENZY_LIB_ANALYSIS_MEMORY_SHARDING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace frenzy {

/// The values a Megatron-style tensor-parallel split divides by the TP
/// degree: weights of the linear layers (column- and row-parallel alike),
/// the activations between a column-parallel and the next row-parallel
/// matmul, the biases added there, and their gradients.
llvm::DenseSet<mlir::Value> shardedValues(mlir::func::FuncOp func);

} // namespace frenzy

#endif
