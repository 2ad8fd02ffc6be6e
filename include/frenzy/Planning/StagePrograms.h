//===- StagePrograms.h - schedule orders and pipeline degrees ---*- C++ -*-===//
#ifndef FRENZY_PLANNING_STAGEPROGRAMS_H
#define FRENZY_PLANNING_STAGEPROGRAMS_H

#include "frenzy/Planning/Partitioner.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <vector>

namespace frenzy {
enum class PipelineSchedule { OneFOneB, GPipe };

/// "1f1b" / "gpipe".
llvm::StringRef scheduleName(PipelineSchedule kind);
std::optional<PipelineSchedule> parseScheduleName(llvm::StringRef name);

/// One compute action of a stage: a micro-batch's forward or backward.
struct PhaseStep {
  bool backward = false;
  int32_t microBatch = 0;
  bool operator==(const PhaseStep &o) const {
    return backward == o.backward && microBatch == o.microBatch;
  }
};

/// The order of every stage's phases, per pipeline, per stage: what
/// frenzy-pipeline-schedule records and the plan writer turns into streams.
struct ScheduleOrders {
  PipelineSchedule kind = PipelineSchedule::OneFOneB;
  std::vector<std::vector<std::vector<PhaseStep>>> pipelines;
};

/// Stage s of S with M micro-batches: GPipe (all forwards, then all
/// backwards) or 1F1B (S - s - 1 warm-up forwards, then alternating).
std::vector<PhaseStep> stageOrder(PipelineSchedule kind, int64_t s, int64_t S,
                                  int64_t M);
ScheduleOrders scheduleOrders(const PartitionPlan &pp, PipelineSchedule kind);

/// Each pipeline's TP degree (its stages' common one); nullopt when a
/// pipeline's stages differ (the runtime runs one program per pipeline).
std::optional<std::vector<int64_t>> pipelineTpDegrees(const PartitionPlan &pp);

} // namespace frenzy

#endif
