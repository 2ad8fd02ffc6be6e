//===- PlanParts.h - what the plan translation derives before writing -*- C++ -*-===//
//
// The steps of the IR -> plan.bin translation hand each other plain data,
// and only PlanWriter.cpp's assembly turns it into a plan::Plan, once:
//
//   lowerProgram        the step function(s) as Programs, and which op
//                       each instruction came from
//   placeStages         each stage's instructions and the tensors crossing
//                       stages, from the ops' blocks and the layout's
//                       stage placements (frenzy.layout)
//   commGroups          DP / TIED / TP groups and the norm's owners
//   rankStreams         every rank's actions in the schedule's order
//                       (frenzy.schedule), with their predicted starts
//   placeSideTaskSlots  the side-task slots (frenzy.side_tasks) in them
//
// Private to lib/Target/Plan.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_TARGET_PLAN_PLANPARTS_H
#define FRENZY_LIB_TARGET_PLAN_PLANPARTS_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Planning/StagePrograms.h"
#include "plan.pb.h"

#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace frenzy::target {

/// The lowered programs: 0 is Plan.program, k > 0 Plan.more_programs(k-1);
/// ops[k][i] is the op instruction i of program k was lowered from.
struct LoweredPrograms {
  std::vector<plan::Program> programs;
  std::vector<std::vector<mlir::Operation *>> ops;
};

/// Tensor `tensor` made by stage `from`'s forward (or backward) and read by
/// stage `to`'s forward (or backward), within one pipeline.
struct Transfer {
  int32_t tensor = 0;
  size_t from = 0, to = 0;
  bool sentAfterBackward = false, readByBackward = false;
};

/// One stage as placed: the program it runs and its instructions by phase
/// (indices into that program), the tensors it receives and sends, and its
/// ranks (plan-wide ids, one per device, in TP order).
struct StageWork {
  const Stage *stage = nullptr; // the layout's placement
  int32_t pipeline = 0, index = 0;
  int32_t program = 0;
  std::vector<int32_t> instrs, forward, backward, update;
  std::vector<int32_t> recv, send; // ascending tensor ids
  std::vector<int32_t> ranks;
  int64_t firstMicroBatch = 0;
};

struct PipelineWork {
  std::vector<StageWork> stages;
  std::vector<Transfer> transfers; // in the order streams take them
};

/// Everything a partitioned plan holds besides its header and programs.
struct PlacedPlan {
  std::vector<PipelineWork> pipelines;
  int32_t ranks = 0;
  int64_t totalMicroBatches = 0;
  std::vector<plan::CommGroup> groups;
  std::vector<std::vector<int32_t>> normTensors;  // per rank
  std::vector<std::vector<plan::Action>> streams; // per rank
  /// Rank r's stage (an index pair into `pipelines`).
  std::vector<const StageWork *> stageOf;
};

/// Fills pipelines, ranks, stageOf, totalMicroBatches from the layout and
/// the ops the programs were lowered from.
void placeStages(const PartitionPlan &pp, const LoweredPrograms &lowered,
                 PlacedPlan &out);

/// Fills groups and normTensors (needs placeStages).
void commGroups(const LoweredPrograms &lowered, PlacedPlan &out);

/// Fills streams in `schedule`'s phase orders, with every action's
/// predicted start from the stages' predicted times (needs commGroups).
void rankStreams(const ScheduleOrders &schedule, PlacedPlan &out);

/// The side tasks `module` records: their list, and their slots placed in
/// `placed`'s streams. Fails with a diagnostic on a slot no stream has.
mlir::LogicalResult
placeSideTaskSlots(mlir::ModuleOp module, PlacedPlan &placed,
                   std::vector<plan::SideTask> &tasks, double &gpuSeconds);

} // namespace frenzy::target

#endif
