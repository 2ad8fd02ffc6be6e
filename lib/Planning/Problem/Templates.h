//===- Templates.h - pipeline shapes and their placement ------*- C++ -*-===//
//
// A template is one pipeline shape: a sequence of stage groups (GPU type,
// TP degree), its layers split to minimise the bottleneck stage within
// memory. A solver picks how many pipelines of each template to build;
// assemble() places them on the nodes and the plan is scored exactly.
// Shared by the fast and the exhaustive solver. Internal.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_PLANNING_PROBLEM_TEMPLATES_H
#define FRENZY_LIB_PLANNING_PROBLEM_TEMPLATES_H

#include "PlanCost.h"

#include <optional>

namespace frenzy::plan {

/// The nodes of each GPU type and the TP degrees a stage group can take
/// (dividing every node's count of the type, so groups tile the nodes).
struct DeviceGroups {
  explicit DeviceGroups(const PlanProblem &p);
  std::vector<std::vector<int>> nodes; // per device
  std::vector<int64_t> gpus, maxPerNode;
  std::vector<std::vector<int64_t>> tps;
  int64_t groupsOf(int device, int64_t tp) const;
};

struct Template {
  std::vector<int> stageDevice; // per stage
  int64_t tp = 1;
  bool spans = false; // stages on different nodes (for the split)
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<double> stageSeconds;
  std::vector<int64_t> stagePeak;
  double bottleneck = 0;
  int64_t paramsPerRank = 0;  // the largest stage's
  std::vector<int64_t> gpus;  // per device, one pipeline's
  bool mixed = false;
  int64_t depth() const { return int64_t(stageDevice.size()); }
  int64_t totalGpus() const { return depth() * tp; }
  std::string describe(const PlanProblem &p) const;
};

/// The contiguous split of the layers over `stageDevice` (in pipeline
/// order) minimising the bottleneck stage, every stage within memory: a
/// bisection on the bottleneck with greedy packing (exact for contiguous
/// splits). Nothing when no split fits; then `smallestNeed` (per device)
/// records what an even split would need.
std::optional<Template> shapeTemplate(const PlanCost &cost,
                                      const DeviceGroups &groups,
                                      std::vector<int> stageDevice,
                                      int64_t tp, bool spans, int64_t mb,
                                      std::vector<int64_t> *smallestNeed);

/// Places `count` pipelines of each template on the nodes (per type,
/// larger TP first, first fit, a pipeline's stages on consecutive groups)
/// and scores the plan exactly.
llvm::Expected<PartitionPlan>
assemble(const PlanCost &cost, const DeviceGroups &groups,
         const std::vector<std::pair<const Template *, int64_t>> &uses,
         int64_t mb);

} // namespace frenzy::plan

#endif
