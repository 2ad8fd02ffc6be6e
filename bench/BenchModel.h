//===- BenchModel.h - build a model's training step for a benchmark -*- C++ -*-//
#ifndef FRENZY_BENCH_BENCHMODEL_H
#define FRENZY_BENCH_BENCHMODEL_H

#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Import/OnnxImporter.h"

#include "mlir/Pass/PassManager.h"

namespace frenzy::bench {

/// Imports at micro-batch 1 and runs fusion, block annotation, autodiff,
/// AdamW and the precision policy: what frenzy-opt does before planning.
inline mlir::OwningOpRef<mlir::ModuleOp>
buildTrainingModule(llvm::StringRef path, int64_t seq, llvm::StringRef loss,
                    llvm::StringRef precision, mlir::MLIRContext *ctx) {
  OnnxImportOptions io;
  io.batch = 1;
  io.seq = seq;
  mlir::OwningOpRef<mlir::ModuleOp> m = importOnnxFile(path, io, ctx);
  if (!m)
    return nullptr;
  mlir::PassManager pm(ctx);
  pm.addPass(createFrenzyFusePatterns());
  pm.addPass(createFrenzyAnnotateBlocks());
  FrenzyAutodiffOptions ad;
  ad.loss = loss.str();
  pm.addPass(createFrenzyAutodiff(ad));
  pm.addPass(createFrenzyOptimizer());
  FrenzyPrecisionOptions po;
  po.policy = precision.str();
  pm.addPass(createFrenzyPrecision(po));
  if (failed(pm.run(*m)))
    return nullptr;
  return m;
}

} // namespace frenzy::bench

#endif
