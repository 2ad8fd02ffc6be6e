//===- Passes.h - frenzy dialect passes -------------------------*- C++ -*-===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_PASSES_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_PASSES_H

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace frenzy {
#define GEN_PASS_DECL
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

#endif
