//===- FrenzyOps.h - frenzy dialect ops, attributes, interfaces -*- C++ -*-===//
#ifndef FRENZY_DIALECT_FRENZY_IR_FRENZYOPS_H
#define FRENZY_DIALECT_FRENZY_IR_FRENZYOPS_H

#include "frenzy/Dialect/Frenzy/IR/FrenzyDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "frenzy/Dialect/Frenzy/IR/LayoutParams.h"

#define GET_ATTRDEF_CLASSES
#include "frenzy/Dialect/Frenzy/IR/FrenzyAttrs.h.inc"

namespace frenzy {
namespace detail {
/// Default cost facts shared by every op (see FrenzyInterfaces.td).
int64_t defaultFlops(mlir::Operation *op);
int64_t operandBytes(mlir::Operation *op);
int64_t resultBytes(mlir::Operation *op);
} // namespace detail

/// Bytes of one element of a tensor element type (i1 counts as one byte, the
/// way every runtime stores booleans).
int64_t elementBytes(mlir::Type elementType);
/// Bytes of a static tensor; 0 for anything else.
int64_t tensorBytes(mlir::Type type);
} // namespace frenzy

#include "frenzy/Dialect/Frenzy/IR/FrenzyInterfaces.h.inc"

#define GET_OP_CLASSES
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h.inc"

namespace frenzy {
/// The model block of an op (its `frenzy.block`); ops without one (the
/// optimizer's global reductions, the loss seed) count as the head.
inline int64_t blockIndexOf(mlir::Operation *op) {
  if (auto b = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName))
    return b.getIndex();
  return BlockAttr::kHead;
}
} // namespace frenzy

#endif
