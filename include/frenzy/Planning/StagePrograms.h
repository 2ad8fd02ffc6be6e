//===- StagePrograms.h - the partition written into plan.bin ----*- C++ -*-===//
#ifndef FRENZY_PLANNING_STAGEPROGRAMS_H
#define FRENZY_PLANNING_STAGEPROGRAMS_H

#include "frenzy/Planning/Partitioner.h"

#include <optional>
#include <vector>

namespace frenzy {
namespace plan {
class Plan;
}

enum class PipelineSchedule { OneFOneB, GPipe };

/// Adds ranks, stages (instructions by phase, boundary tensors, batch
/// shares), communication groups (DP across differently cut pipelines, tied
/// parameters, TP) and predictions of a partition to a plan whose program is
/// the training step at the partition's micro-batch size, then the per-rank
/// instruction streams of `schedule`.
void addStagePrograms(const PartitionPlan &pp, const ClusterSpec &cluster,
                      const PartitionOptions &o, PipelineSchedule schedule,
                      plan::Plan &out);

/// Each pipeline's TP degree (its stages' common one); nullopt when a
/// pipeline's stages differ (the runtime runs one program per pipeline).
std::optional<std::vector<int64_t>> pipelineTpDegrees(const PartitionPlan &pp);

/// Writes each rank's per-step instruction stream (forward/backward per
/// micro-batch with its sends and receives, gradient reduction, update,
/// tied-parameter sync) for GPipe or 1F1B, and a predicted start time per
/// action from the stages' predicted times. Needs the stages and groups.
void addPipelineSchedule(plan::Plan &plan, PipelineSchedule schedule);

} // namespace frenzy

#endif
