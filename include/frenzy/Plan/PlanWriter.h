//===- PlanWriter.h - lower a training module to plan.bin -------*- C++ -*-===//
#ifndef FRENZY_PLAN_PLANWRITER_H
#define FRENZY_PLAN_PLANWRITER_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "mlir/IR/BuiltinOps.h"

namespace frenzy::plan {
class Plan;
class Program;
} // namespace frenzy::plan

namespace frenzy {

/// Flattens the module's step function (@train_step, else @forward) into a
/// Program: one tensor per SSA value, one instruction per op. Fails with a
/// diagnostic on an attribute or type the runtime cannot represent.
mlir::LogicalResult lowerProgram(mlir::ModuleOp module, plan::Program &out);

/// Builds the whole plan from what the IR says: model identity, precision,
/// optimizer and `module`'s program; `more` are the same step split for the
/// partition's other TP degrees (Plan.more_programs). When `module` records
/// a partition (frenzy.layout and frenzy.schedule, PartitionAttrs.h) the
/// plan gets its ranks, stages, groups and per-rank streams; otherwise one
/// device per GPU of the cluster. Fails with a diagnostic on a record that
/// does not fit the cluster.
mlir::LogicalResult buildPlan(mlir::ModuleOp module,
                              llvm::ArrayRef<mlir::ModuleOp> more,
                              llvm::StringRef modelPath,
                              llvm::StringRef clusterPath,
                              const ClusterSpec &cluster, plan::Plan &out);

/// Adds the side tasks `module` records (frenzy.side_tasks) and their slots,
/// as SIDE_TASK actions in the streams of every rank of each slot's stage,
/// before the work each slot's bubble precedes. Needs the ranks' streams.
mlir::LogicalResult addSideTaskSlots(mlir::ModuleOp module, plan::Plan &out);

/// Writes a plan atomically (temporary file, then rename).
llvm::Error writePlanFile(const plan::Plan &plan, llvm::StringRef path);

} // namespace frenzy

#endif
