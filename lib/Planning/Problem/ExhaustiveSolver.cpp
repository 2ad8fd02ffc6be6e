//===- ExhaustiveSolver.cpp - every plan of a small cluster (test oracle) -===//
//
// The space the fast solver searches, without its shortcuts: a pipeline is
// any number of stage groups of any GPU types (one TP degree per pipeline,
// stages in non-increasing memory order so stage 0, which holds the most
// micro-batches in flight, gets the most memory), its layers split to
// minimise the bottleneck within memory; a plan is any multiset of such
// pipelines that the cluster's GPUs can hold, at any micro-batch size.
// Every plan is placed and scored exactly (PlanCost::score), except branches
// a makespan lower bound proves cannot beat the best plan so far (the bound
// ignores the all-reduce and optimizer, which only add). Exponential in the
// cluster size: meant for clusters of up to ~16 GPUs.
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
      // Most micro-batches per second per GPU first.
      std::stable_sort(kinds.begin(), kinds.end(),
                       [](const Template &a, const Template &b) {
                         return 1.0 / (a.bottleneck * double(a.totalGpus())) >
                                1.0 / (b.bottleneck * double(b.totalGpus()));
                       });
      rate.clear();
      for (const Template &t : kinds)
        rate.push_back(1.0 / (t.bottleneck * double(t.totalGpus())));
      std::vector<int64_t> counts(kinds.size(), 0);
      std::vector<int64_t> free = groups.gpus;
      search(0, counts, free, mb);
    }
    if (plans > kMaxPlans)
      return llvm::createStringError(
          std::errc::result_out_of_range,
          "the exhaustive solver stops at %lld plans: the cluster is too "
          "large for it",
          (long long)kMaxPlans);
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

  /// A lower bound on the makespan of any plan that keeps the pipelines
  /// chosen so far and adds kinds k.. on the free GPUs: those add at most
  /// T x rate[k] x (free GPUs) micro-batches by time T (kinds are sorted
  /// by micro-batches per second per GPU, so rate[k] bounds the rest).
  double lowerBound(size_t k, const std::vector<int64_t> &counts,
                    const std::vector<int64_t> &free, int64_t mb) const {
    int64_t M = p.globalBatch / mb, F = 0;
    for (int64_t f : free)
      F += f;
    double fluid = k < kinds.size() ? rate[k] * double(F) : 0;
    auto enough = [&](double T) {
      double n = T * fluid;
      for (size_t i = 0; i < k; ++i)
        if (counts[i])
          n += double(counts[i] * PlanCost::microBatchesWithin(
                                      T, kinds[i].bottleneck, kinds[i].depth()));
      return n >= double(M);
    };
    double lo = 0, hi = 1;
    while (!enough(hi)) {
      hi *= 2;
      if (hi > 1e30)
        return hi;
    }
    for (int i = 0; i < 40; ++i) {
      double mid = 0.5 * (lo + hi);
      (enough(mid) ? hi : lo) = mid;
    }
    return lo;
  }

  /// Every multiset of kinds the free GPUs can hold (counts in kind
  /// order), less the branches the bound proves cannot win.
  void search(size_t k, std::vector<int64_t> &counts,
              std::vector<int64_t> &free, int64_t mb) {
    if (best && lowerBound(k, counts, free, mb) >= best->stepSeconds())
      return;
    if (k == kinds.size()) {
      std::vector<std::pair<const Template *, int64_t>> uses;
      for (size_t i = 0; i < kinds.size(); ++i)
        if (counts[i])
          uses.push_back({&kinds[i], counts[i]});
      if (uses.empty())
        return;
      if (++plans > kMaxPlans)
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
    // Many pipelines of the most efficient kinds first: good plans early
    // make the bound prune more.
    for (int64_t c = most; c >= 0; --c) {
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
  std::vector<double> rate; // micro-batches per second per GPU, by kind
  std::optional<PartitionPlan> best;
  int64_t plans = 0;
  static constexpr int64_t kMaxPlans = 2000000;
};

} // namespace

llvm::Expected<PartitionPlan> solveExhaustive(const PlanProblem &problem) {
  return Exhaustive(problem).run();
}

} // namespace frenzy::plan
