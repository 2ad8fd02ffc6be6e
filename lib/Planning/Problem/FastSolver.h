//===- FastSolver.h - the polynomial partition search ----------*- C++ -*-===//
//
// The state of one solveFast() run: templates per micro-batch size, the
// coordinate descent over per-type fills and mixed-pipeline counts, exact
// re-scoring, and the idle-GPU pass (IdleGpus.cpp). Internal.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_PLANNING_PROBLEM_FASTSOLVER_H
#define FRENZY_LIB_PLANNING_PROBLEM_FASTSOLVER_H

#include "Templates.h"

#include <map>
#include <optional>

namespace frenzy::plan {

int64_t gpusUsed(const PartitionPlan &plan);

class FastSearch {
public:
  explicit FastSearch(const PlanProblem &problem);
  llvm::Expected<PartitionPlan> run(const SolveOptions &options);

private:
  struct Quick {
    double seconds = 0;
    int64_t gpus = 0; // GPUs of the pipelines that get work
  };
  struct Scored {
    Quick quick;
    std::vector<int64_t> counts; // pipelines per template
  };

  struct Fill {
    size_t primary;          // a homogeneous template
    int64_t cap = INT64_MAX; // its most pipelines
  };

  bool usable(int device) const;
  void buildTemplates(int64_t mb, std::vector<Template> &out);
  /// Step time of `counts` pipelines per template, estimated without
  /// placing them: water-filled makespan, all-reduce, optimizer.
  Quick quick(const std::vector<Template> &ts,
              const std::vector<int64_t> &counts, int64_t mb) const;
  void fill(const std::vector<Template> &ts, const std::vector<size_t> &ofType,
            Fill f, std::vector<int64_t> free,
            std::vector<int64_t> &counts) const;
  /// The coordinate descent; the best few distinct states it saw.
  std::vector<Scored> assign(const std::vector<Template> &ts, int64_t mb);
  std::string describe(const std::vector<Template> &ts,
                       const std::vector<int64_t> &counts, int64_t mb) const;
  llvm::Error noPlanError() const;

  /// Offers idle GPUs to the plan one pipeline at a time while that
  /// shortens the step, then records why each idle GPU stays idle.
  void useIdleGpus(PartitionPlan &plan) const;
  /// The plan plus one pipeline of `t` on free GPUs, scored; nothing when
  /// the free GPUs cannot take it.
  std::optional<PartitionPlan>
  withPipeline(const PartitionPlan &plan, const Template &t,
               const std::vector<std::vector<int64_t>> &freeByNode) const;

  const PlanProblem &p;
  PlanCost cost;
  DeviceGroups groups;
  std::vector<int64_t> smallestNeed; // per device, for errors and reasons
  std::map<int64_t, std::vector<Template>> templates; // by micro-batch
  bool mixedPipelines = true;
};

} // namespace frenzy::plan

#endif
