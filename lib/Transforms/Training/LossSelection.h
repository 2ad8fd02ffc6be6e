//===- LossSelection.h - find or add the training loss ----------*- C++ -*-===//
#ifndef FRENZY_LIB_TRANSFORMS_TRAINING_LOSSSELECTION_H
#define FRENZY_LIB_TRANSFORMS_TRAINING_LOSSSELECTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace frenzy {

/// Index of the function result that is the scalar training loss. With
/// `addCrossEntropy`, a function without one gets a mean cross-entropy over
/// its logits result (and a `targets` argument when it has none). Emits an
/// error saying what to do and returns failure when there is no loss.
mlir::FailureOr<unsigned> selectLoss(mlir::func::FuncOp func,
                                     bool addCrossEntropy);

/// The `frenzy.name` of a function argument or result ("" if none).
llvm::StringRef resultName(mlir::func::FuncOp func, unsigned i);
llvm::StringRef argumentName(mlir::func::FuncOp func, unsigned i);

} // namespace frenzy

#endif
