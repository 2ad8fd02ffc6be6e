//===- SideTaskAttrs.h - bubbles and side-task slots in the IR --*- C++ -*-===//
//
// The bubble analysis' problem as the IR gives it (the recorded partition
// and schedule, device capacities from the cluster file), and the side-task
// placement frenzy-place-side-tasks records for the plan writer:
//
//   module attributes {frenzy.side_tasks = {memory_margin, time_margin,
//       gpu_seconds, step_seconds, idle_gpu_seconds,
//       tasks = [{name, kind, memory_bytes, steps, priority,
//                 placed_steps, gpu_seconds, why}],
//       slots = [{task, pipeline, stage, start, seconds, steps,
//                 memory_bytes, before}]}}
//
// `before` names the main-stream work the slot's bubble precedes ("F3",
// "B0", or "reduce" for the gradient reduction): the plan writer puts the
// slot there in each rank's stream.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_SIDETASKATTRS_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_SIDETASKATTRS_H

#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/Planning/SideTasks.h"

namespace frenzy {

inline constexpr llvm::StringLiteral kSideTasksAttrName = "frenzy.side_tasks";

/// The cluster a partition was made on: `override` if given, else the
/// path the partition records. Failure with a diagnostic.
mlir::FailureOr<ClusterSpec> clusterOfPartition(mlir::ModuleOp module,
                                                const RecordedPartition &rec,
                                                llvm::StringRef override);

/// The bubble analysis' problem: the partition's stages (the recorded
/// forward share and boundary transfer; without them forward one third and
/// backward two thirds of a micro-batch's time), the schedule's orders,
/// capacities and memory.
bubbles::ScheduleProblem scheduleProblem(const RecordedPartition &rec,
                                         const ScheduleOrders &orders,
                                         const ClusterSpec &cluster);

/// Reads partition, schedule and cluster and runs the analysis; failure
/// with a diagnostic (no partition or schedule: says which pass to run).
struct ModuleBubbles {
  bubbles::ScheduleProblem problem;
  bubbles::BubbleAnalysis analysis;
  ClusterSpec cluster;
};
mlir::FailureOr<ModuleBubbles> analyzeModuleBubbles(mlir::ModuleOp module,
                                                    llvm::StringRef cluster,
                                                    llvm::StringRef pass);

/// Side-task slots as the plan writer needs them.
struct RecordedSideTask {
  std::string name, kind, why;
  int64_t memoryBytes = 0, steps = -1, priority = 0, placedSteps = 0;
  double gpuSeconds = 0;
};
struct RecordedSlot {
  int64_t task = 0, pipeline = 0, stage = 0, steps = 0, memoryBytes = 0;
  double start = 0, seconds = 0;
  std::string before;
};
struct RecordedSideTasks {
  std::vector<RecordedSideTask> tasks;
  std::vector<RecordedSlot> slots;
  double gpuSeconds = 0;
};

void recordSideTasks(mlir::ModuleOp module,
                     const sidetasks::PlacementProblem &problem,
                     const sidetasks::Placement &placement);

/// What the module records; nullopt when nothing, failure (with a
/// diagnostic naming the field) when malformed.
mlir::FailureOr<std::optional<RecordedSideTasks>>
readSideTasks(mlir::ModuleOp module);

} // namespace frenzy

#endif
