//===- InitAll.h - register Frenzy's dialects and passes --------*- C++ -*-===//
//
// Only what Frenzy uses is registered: the frenzy and func dialects and the
// handful of upstream passes that are useful on them. Registering every
// upstream dialect would make the tools large and slow to link.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_INITALL_H
#define FRENZY_INITALL_H

#include "frenzy/Dialect/Frenzy/IR/FrenzyDialect.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Dialect/Frenzy/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace frenzy {

inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<FrenzyDialect, mlir::func::FuncDialect>();
}

inline void registerAllPasses() {
  registerFrenzyPasses();
  registerFrenzyPipelines();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}

} // namespace frenzy

#endif
