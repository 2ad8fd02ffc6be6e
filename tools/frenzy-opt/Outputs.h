//===- Outputs.h - what frenzy-opt prints and writes for a model -*- C++
//-*-===//
#ifndef FRENZY_OPT_OUTPUTS_H
#define FRENZY_OPT_OUTPUTS_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Planning/Partitioner.h"
#include "frenzy/Planning/TimelineSimulation.h"
#include "plan.pb.h"

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
/// with --explain's alternatives; `timeline`, when given, the predicted
/// timeline's figures (the step printed, and the shapes re-scored).
int printPartition(mlir::ModuleOp module, const ClusterSpec &cluster,
                   const TimelineScore *timeline = nullptr);

/// plan.bin's content with each action's predicted seconds and, when
/// played, its predicted timeline (whose step is then the plan's
/// predicted_step_seconds).
struct BuiltPlan {
  plan::Plan plan;
  PredictedTimeline timeline;
  bool played = false;
};

/// Whether the planner re-scores with the predicted timeline: every GPU
/// type of the cluster has a frenzy-calibrate profile (the timeline's
/// rates are measured, docs/calibration.md).
bool timelineScores(const ClusterSpec &cluster);

/// Builds the plan from `module`, the step at the micro-batch size with its
/// recorded partition if any, and `more`, the step split for the
/// partition's other TP degrees; `play`: also plays its timeline (plans of
/// at most 4,096 ranks). 0, or 1 after the error was printed.
int buildPlanOf(mlir::ModuleOp module, llvm::ArrayRef<mlir::ModuleOp> more,
                llvm::StringRef input, const ClusterSpec &cluster, bool play,
                BuiltPlan &out);

/// Writes a built plan to `output` (or with --emit=trace its predicted
/// timeline).
int emitBuiltPlan(const BuiltPlan &built, const ClusterSpec &cluster,
                  llvm::StringRef output);

/// --emit=plan-mlir: prints the step module the plan translation reads
/// (one TP degree: `more` must be empty, else one error line). 0 or 1.
int printPlanModule(mlir::ModuleOp module, llvm::ArrayRef<mlir::ModuleOp> more,
                    llvm::StringRef output);

/// buildPlanOf, then emitBuiltPlan (with --emit=plan-mlir: the module the
/// plan is translated from, for frenzy-translate).
int writePlan(mlir::ModuleOp module, llvm::ArrayRef<mlir::ModuleOp> more,
              llvm::StringRef input, const ClusterSpec &cluster,
              llvm::StringRef output);

/// The --layout specs of the search's `count` best shapes for the
/// partition `planned` records (its problem and options), fastest by the
/// search first; only shapes a --layout places as the search did (devices
/// in cluster order).
std::vector<std::string> searchedLayouts(mlir::ModuleOp planned,
                                         const ClusterSpec &cluster,
                                         size_t count);

} // namespace frenzy::driver

#endif
