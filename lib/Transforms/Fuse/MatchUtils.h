//===- MatchUtils.h - helpers for matching decomposed patterns --*- C++ -*-===//
#ifndef FRENZY_LIB_TRANSFORMS_FUSE_MATCHUTILS_H
#define FRENZY_LIB_TRANSFORMS_FUSE_MATCHUTILS_H

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace frenzy::fuse {

/// The value of a splat (or single-element) float constant behind `v`,
/// looking through casts.
std::optional<double> splatValue(mlir::Value v);

/// True when `v` is a splat constant within a relative 1e-3 of `expected`.
bool isConstant(mlir::Value v, double expected);

/// Flattens a tree of multiplications rooted at `root` (descending into
/// single-use mul operands) into its factors. Constant factors are
/// multiplied into `scale`; the rest go to `factors`. `inner` receives the
/// interior mul ops (not the root).
void flattenProduct(mlir::Value root, llvm::SmallVectorImpl<mlir::Value> &factors,
                    double &scale,
                    llvm::SmallVectorImpl<mlir::Operation *> *inner = nullptr);

/// Looks through casts that keep the element count (the fp32 upcasts that
/// mixed-precision exports insert around norms).
mlir::Value skipCasts(mlir::Value v);

/// True when `v` is x^2: pow(x, 2) or mul(x, x). Sets `x`.
bool isSquareOf(mlir::Value v, mlir::Value &x);

/// True when `v` is x^3 written as pow(x, 3) or a product of three x.
bool isCubeOf(mlir::Value v, mlir::Value x);

/// The operand of an `add(a, c)` (either order) whose other side is a
/// constant; sets `c` to that constant's value.
mlir::Value addConstant(mlir::Value v, double &c);

/// Reduce-mean of `v` over its trailing dims with keepdims; returns the
/// reduced input and the first reduced axis.
mlir::Value trailingMean(mlir::Value v, int64_t &axis);

} // namespace frenzy::fuse

#endif
