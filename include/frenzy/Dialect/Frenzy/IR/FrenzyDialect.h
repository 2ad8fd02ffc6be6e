//===- FrenzyDialect.h - the frenzy dialect ---------------------*- C++ -*-===//
#ifndef FRENZY_DIALECT_FRENZY_IR_FRENZYDIALECT_H
#define FRENZY_DIALECT_FRENZY_IR_FRENZYDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOpsDialect.h.inc"

#endif
