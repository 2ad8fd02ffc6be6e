//===- BenchModel.h - build a model's training step for a benchmark -*- C++ -*-//
#ifndef FRENZY_BENCH_BENCHMODEL_H
#define FRENZY_BENCH_BENCHMODEL_H

#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Import/OnnxImporter.h"

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace frenzy::bench {

/// The options both benchmarks take; other arguments are returned in
/// `rest` (argv[1] is the model).
struct BenchArgs {
  int64_t seq = 1024, globalBatch = 8;
  std::string precision = "bf16-mixed", loss = "auto";
  std::vector<std::string> rest;
};
inline BenchArgs parseBenchArgs(int argc, char **argv, int64_t globalBatch) {
  BenchArgs b;
  b.globalBatch = globalBatch;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    if (a.consume_front("--seq="))
      a.getAsInteger(10, b.seq);
    else if (a.consume_front("--global-batch="))
      a.getAsInteger(10, b.globalBatch);
    else if (a.consume_front("--precision="))
      b.precision = a.str();
    else if (a.consume_front("--loss="))
      b.loss = a.str();
    else
      b.rest.push_back(a.str());
  }
  return b;
}

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
