//===- ExhaustiveSolver.cpp - every plan of a small cluster (test oracle) -===//
//
// The space the fast solver searches, without its shortcuts: a pipeline is
// any number of stage groups of any GPU types (one TP degree per pipeline,
// stages in non-increasing memory order so stage 0, which holds the most
// micro-batches in flight, gets the most memory), its layers split to
// minimise the bottleneck within memory; a plan is any multiset of such
// pipelines that the cluster's GPUs can hold, at any micro-batch size.
// Every plan is placed and scored exactly (PlanCost::score). Exponential in
// the cluster size: meant for clusters of up to ~16 GPUs.
//
//===----------------------------------------------------------------------===//
#include "Templates.h"

#include <algorithm>
#include <deque>

namespace frenzy::plan {

namespace {

class Exhaustive {
public:
  explicit Exhaustive(const PlanProblem &problem)
      : p(problem), cost(problem), groups(problem) {}

  llvm::Expected<PartitionPlan> run() {
    if (llvm::Error e = p.check())
      return std::move(e);
    for (int64_t mb : usableMicroBatches(p)) {
      kinds.clear();
      enumerateKinds(mb);
      std::vector<int64_t> counts(kinds.size(), 0);
      std::vector<int64_t> free = groups.gpus;
      search(0, counts, free, mb);
    }
    if (!best)
      return llvm::createStringError(std::errc::not_enough_memory,
                                     "no plan fits the cluster");
    return *best;
  }

private:
  /// Every pipeline shape: per TP degree, a number of stage groups of each
  /// type (0 .. what the type has), 1 .. layers stages in all.
  void enumerateKinds(int64_t mb) {
    int K = int(p.devices.size());
    int64_t L = std::max<int64_t>(1, cost.layers());
    std::vector<int> order;
    for (int d = 0; d < K; ++d)
      if (p.devices[d].unusable.empty() && groups.gpus[d] > 0)
        order.push_back(d);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return p.devices[a].memoryBytes > p.devices[b].memoryBytes;
    });
    for (int64_t tp : p.tpDegrees) {
      std::vector<int64_t> n(order.size(), 0);
      while (true) {
        size_t i = 0;
        for (; i < order.size(); ++i) {
          int d = order[i];
          bool ok = llvm::is_contained(groups.tps[d], tp);
          if (ok && n[i] < groups.groupsOf(d, tp)) {
            ++n[i];
            break;
          }
          n[i] = 0;
        }
        if (i == order.size())
          break;
        std::vector<int> stages;
        int64_t maxPerNode = 0;
        int types = 0;
        for (size_t k = 0; k < order.size(); ++k) {
          stages.insert(stages.end(), n[k], order[k]);
          if (n[k]) {
            ++types;
            maxPerNode = groups.maxPerNode[order[k]];
          }
        }
        if (int64_t(stages.size()) > L)
          continue;
        bool spans = types > 1 || int64_t(stages.size()) * tp > maxPerNode;
        if (auto t = shapeTemplate(cost, groups, stages, tp, spans, mb,
                                   nullptr))
          kinds.push_back(std::move(*t));
      }
    }
  }

  /// Every multiset of kinds the free GPUs can hold (counts in kind order).
  void search(size_t k, std::vector<int64_t> &counts,
              std::vector<int64_t> &free, int64_t mb) {
    if (k == kinds.size()) {
      std::vector<std::pair<const Template *, int64_t>> uses;
      for (size_t i = 0; i < kinds.size(); ++i)
        if (counts[i])
          uses.push_back({&kinds[i], counts[i]});
      if (uses.empty())
        return;
      auto plan = assemble(cost, groups, uses, mb);
      if (!plan) {
        llvm::consumeError(plan.takeError());
        return;
      }
      if (!best || plan->stepSeconds() < best->stepSeconds())
        best = std::move(*plan);
      return;
    }
    const Template &t = kinds[k];
    int64_t most = INT64_MAX;
    for (size_t d = 0; d < free.size(); ++d)
      if (t.gpus[d])
        most = std::min(most, free[d] / t.gpus[d]);
    for (int64_t c = 0; c <= most; ++c) {
      counts[k] = c;
      for (size_t d = 0; d < free.size(); ++d)
        free[d] -= c * t.gpus[d];
      search(k + 1, counts, free, mb);
      for (size_t d = 0; d < free.size(); ++d)
        free[d] += c * t.gpus[d];
    }
    counts[k] = 0;
  }

  const PlanProblem &p;
  PlanCost cost;
  DeviceGroups groups;
  std::vector<Template> kinds;
  std::optional<PartitionPlan> best;
};

} // namespace

llvm::Expected<PartitionPlan> solveExhaustive(const PlanProblem &problem) {
  return Exhaustive(problem).run();
}

} // namespace frenzy::plan
