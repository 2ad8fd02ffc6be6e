//===- StagePrograms.cpp - per-pipeline facts of a partition --------------===//
//
// What the driver needs of a partition before it compiles the step
// programs: each pipeline's TP degree. The stages' instructions, groups
// and streams are the plan translation's (lib/Target/Plan).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/StagePrograms.h"

using namespace frenzy;

std::optional<std::vector<int64_t>>
frenzy::pipelineTpDegrees(const PartitionPlan &pp) {
  std::vector<int64_t> degrees;
  for (const Pipeline &p : pp.pipelines) {
    int64_t tp = p.stages.empty() ? 1 : p.stages.front().tp();
    for (const Stage &st : p.stages)
      if (st.tp() != tp)
        return std::nullopt;
    degrees.push_back(tp);
  }
  return degrees;
}
