//===- PlanWriter.h - the IR -> plan.bin translation ------------*- C++ -*-===//
//
// The only way out of the IR to the runtime: a training module (its step
// function, and frenzy.layout / frenzy.schedule / frenzy.side_tasks when
// partitioned) becomes plan.bin here and nowhere else (docs/plan.md).
// frenzy-opt calls buildPlan on the modules it compiled; frenzy-translate
// --mlir-to-frenzy-plan runs the same on a .mlir file.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TARGET_PLAN_PLANWRITER_H
#define FRENZY_TARGET_PLAN_PLANWRITER_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

#include <vector>

namespace frenzy::plan {
class Plan;
class Program;
} // namespace frenzy::plan

namespace frenzy {

/// Flattens the module's step function (@train_step, else @forward) into a
/// Program: one tensor per SSA value, one instruction per op. Fails with a
/// diagnostic on an attribute or type the runtime cannot represent. With
/// `instrOps`, instruction i's op is (*instrOps)[i].
mlir::LogicalResult
lowerProgram(mlir::ModuleOp module, plan::Program &out,
             std::vector<mlir::Operation *> *instrOps = nullptr);

/// Builds the whole plan from what the IR says: model identity, precision,
/// optimizer and `module`'s program; `more` are the same step split for the
/// partition's other TP degrees (Plan.more_programs). When `module` records
/// a partition (frenzy.layout and frenzy.schedule, PartitionAttrs.h) the
/// plan gets its ranks, stages, groups and per-rank streams, every action
/// priced by the timeline simulation; otherwise one device per GPU of the
/// cluster. `out` must be empty. Fails with a diagnostic on a record that
/// does not fit the cluster.
mlir::LogicalResult buildPlan(mlir::ModuleOp module,
                              llvm::ArrayRef<mlir::ModuleOp> more,
                              llvm::StringRef modelPath,
                              llvm::StringRef clusterPath,
                              const ClusterSpec &cluster, plan::Plan &out);

/// plan.bin's bytes: the file header and the deterministic serialisation.
llvm::Expected<std::string> encodePlan(const plan::Plan &plan);

/// Writes a plan atomically (temporary file, then rename).
llvm::Error writePlanFile(const plan::Plan &plan, llvm::StringRef path);

/// Registers the mlir-to-frenzy-plan translation (PlanTranslation.cpp).
void registerToPlanTranslation();
/// Its options' category (for a tool's --help).
const llvm::cl::OptionCategory *planTranslationCategory();

} // namespace frenzy

#endif
