//===- TensorParallel.h - can a model be split for TP? ----------*- C++ -*-===//
//
// frenzy-tensor-parallel rewrites the forward graph into one TP rank's
// share, or fails naming the op it cannot split. The planner must not offer
// a TP degree that fails, and frenzy-opt must not write a plan that needs
// one: both ask tensorParallelRefusal(), and frenzy-tp-check records its
// answers for the planner's degrees in the module:
//
//   module attributes {frenzy.tp_refusals = {"2" = "node '...': why", ...}}
//
// (a degree absent from the dictionary was not checked or splits).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_TENSORPARALLEL_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_TENSORPARALLEL_H

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>

namespace frenzy {

constexpr llvm::StringLiteral kTpRefusalsAttrName = "frenzy.tp_refusals";
/// A unit attribute on a module split with sequence parallelism.
constexpr llvm::StringLiteral kSequenceParallelAttrName =
    "frenzy.sequence_parallel";

/// Why the forward graph `module` (before autodiff) cannot be split `degree`
/// ways, as "LOCATION: what" (the first error of frenzy-tensor-parallel on
/// a copy); empty when it can. `module` is not changed. With
/// `sequenceParallel` the token-wise regions must shard too (their tokens
/// divide by the degree).
std::string tensorParallelRefusal(mlir::ModuleOp module, int64_t degree,
                                  bool sequenceParallel = false);

/// The refusals frenzy-tp-check recorded, by degree (empty: none recorded).
std::map<int64_t, std::string> readTpRefusals(mlir::ModuleOp module);

} // namespace frenzy

#endif
