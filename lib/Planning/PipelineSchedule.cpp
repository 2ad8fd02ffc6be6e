//===- PipelineSchedule.cpp - the phase orders of GPipe and 1F1B ----------===//
//
// Per pipeline, GPipe runs all forwards, then all backwards; 1F1B runs
// S - s - 1 warm-up forwards on stage s, then one forward one backward,
// then the remaining backwards, which bounds the micro-batches in flight
// on stage s by S - s. frenzy-pipeline-schedule records these orders
// (frenzy.schedule); the plan translation turns them into per-rank
// streams (lib/Target/Plan/RankStreams.cpp).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/StagePrograms.h"

#include <algorithm>

using namespace frenzy;
using llvm::StringRef;

StringRef frenzy::scheduleName(PipelineSchedule kind) {
  return kind == PipelineSchedule::GPipe ? "gpipe" : "1f1b";
}

std::optional<PipelineSchedule> frenzy::parseScheduleName(StringRef name) {
  if (name == "1f1b")
    return PipelineSchedule::OneFOneB;
  if (name == "gpipe")
    return PipelineSchedule::GPipe;
  return std::nullopt;
}

std::vector<PhaseStep> frenzy::stageOrder(PipelineSchedule kind, int64_t s,
                                          int64_t S, int64_t M) {
  std::vector<PhaseStep> o;
  int64_t warm = kind == PipelineSchedule::GPipe ? M : std::min(S - s - 1, M);
  for (int64_t i = 0; i < warm; ++i)
    o.push_back({false, int32_t(i)});
  for (int64_t i = 0; i + warm < M; ++i) {
    o.push_back({false, int32_t(warm + i)});
    o.push_back({true, int32_t(i)});
  }
  for (int64_t i = std::max<int64_t>(0, M - warm); i < M; ++i)
    o.push_back({true, int32_t(i)});
  return o;
}

ScheduleOrders frenzy::scheduleOrders(const PartitionPlan &pp,
                                      PipelineSchedule kind) {
  ScheduleOrders out;
  out.kind = kind;
  for (const Pipeline &p : pp.pipelines) {
    auto &stages = out.pipelines.emplace_back();
    int64_t S = int64_t(p.stages.size());
    for (int64_t s = 0; s < S; ++s)
      stages.push_back(stageOrder(kind, s, S, p.microBatches));
  }
  return out;
}
