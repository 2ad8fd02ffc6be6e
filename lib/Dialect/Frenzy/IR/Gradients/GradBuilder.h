//===- GradBuilder.h - small builders shared by the gradient rules -*- C++ -*-//
//
// Gradient rules compose ordinary frenzy ops. These helpers compute the
// result types (broadcast shapes, transposed shapes) so that each rule reads
// like its formula.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_DIALECT_FRENZY_IR_GRADIENTS_GRADBUILDER_H
#define FRENZY_LIB_DIALECT_FRENZY_IR_GRADIENTS_GRADBUILDER_H

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

namespace frenzy::grad {

/// Builds ops at the builder's insertion point with one location.
class GradBuilder {
public:
  GradBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() { return loc; }

  /// A scalar (rank-0) constant of `like`'s element type.
  mlir::Value scalar(double v, mlir::Value like);
  /// Zeros of a tensor type (a splat constant, so it costs no bytes).
  mlir::Value zeros(mlir::Type type);

  /// Broadcasting elementwise ops; the result type is the broadcast shape.
  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value sub(mlir::Value a, mlir::Value c);
  mlir::Value mul(mlir::Value a, mlir::Value c);
  mlir::Value div(mlir::Value a, mlir::Value c);
  mlir::Value neg(mlir::Value a);
  mlir::Value where(mlir::Value cond, mlir::Value a, mlir::Value c);
  mlir::Value greaterEqual(mlir::Value a, mlir::Value c);

  /// Sum `g` down to `type`'s shape (the adjoint of broadcasting); returns
  /// g when the shapes already agree.
  mlir::Value unbroadcast(mlir::Value g, mlir::Type type);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);
  /// Swap the last two dims.
  mlir::Value transposeLast2(mlir::Value v);
  mlir::Value matmul(mlir::Value a, mlir::Value c);
  /// 2-d alpha * op(a) op(c).
  mlir::Value gemm(mlir::Value a, mlir::Value c, bool transA, bool transC,
                   double alpha = 1.0);

private:
  mlir::Type broadcastType(mlir::Value a, mlir::Value c,
                           mlir::Type elementType = {});
  mlir::OpBuilder &b;
  mlir::Location loc;
};

llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
bool isFloatTensor(mlir::Value v);

} // namespace frenzy::grad

#endif
