//===- Outputs.h - what frenzy-opt prints and writes for a model -*- C++
//-*-===//
#ifndef FRENZY_OPT_OUTPUTS_H
#define FRENZY_OPT_OUTPUTS_H

#include "frenzy/Cluster/ClusterSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>

namespace frenzy::driver {

/// Opens -o's file (or stdout); null after one error line.
std::unique_ptr<llvm::ToolOutputFile> openOutput(llvm::StringRef output);

/// Prints diagnostics as "file: node 'name': error: ...", one line each.
void printDiagnosticsPlainly(mlir::MLIRContext &context);

/// --predict-resources: the memory model of the training step (built at
/// batch 1) against every GPU type of the cluster.
int predict(mlir::ModuleOp module, const ClusterSpec &cluster,
            llvm::StringRef input);

/// --emit=report|json: the partition `module` records (frenzy-partition),
/// with --explain's alternatives.
int printPartition(mlir::ModuleOp module, const ClusterSpec &cluster);

/// Writes plan.bin (or with --emit=trace its predicted timeline, with
/// --emit=plan-mlir the module the plan is translated from) from
/// `module`, the step at the micro-batch size with its recorded partition
/// if any, and `more`, the step split for the partition's other TP
/// degrees.
int writePlan(mlir::ModuleOp module, llvm::ArrayRef<mlir::ModuleOp> more,
              llvm::StringRef input, const ClusterSpec &cluster,
              llvm::StringRef output);

} // namespace frenzy::driver

#endif
