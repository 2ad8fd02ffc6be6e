//===- GavelPolicy.cpp - heterogeneity-aware max-min fairness (Gavel) -----===//
//
// Gavel (Narayanan et al., OSDI'20), its max-min fairness policy with a
// fixed scale factor per job (the user's GPU request):
//  - throughput matrix T[j][t]: the job's speed on its request on type t,
//    normalised by its best type (Gavel normalises by an equal-share
//    allocation; with a job's best type as the unit the ordering of jobs
//    is the same up to a per-job constant);
//  - allocation X[j][t], the share of time job j should spend on type t,
//    from Gavel's linear program (GavelProgram.cpp, CBC): max-min
//    fairness of sum_t T[j][t] X[j][t] (default) or its sum (the variant
//    Sia's artifact runs), under sum_t X[j][t] <= 1 and
//    sum_j X[j][t] * request_j <= GPUs of t. --baseline-mode=greedy (the
//    fast mode) instead fills max-min progressively (water-filling): the
//    job with the lowest normalised throughput gets the next small time
//    share on its fastest type with room, until no job can grow; exact for
//    one resource, close for several.
//  - the round mechanism: 6-minute rounds; priority[j][t] = X[j][t] /
//    (share of rounds j has received on t); each round (job, type) pairs
//    are granted in priority order while GPUs of that type last. A job that
//    keeps its type keeps its GPUs (lease renewal); one that moves pays the
//    checkpoint-restart cost.
//
//===----------------------------------------------------------------------===//
#include "Policies.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <queue>

using namespace frenzy;
using namespace frenzy::sched;

namespace {

class GavelPolicy : public Policy {
public:
  explicit GavelPolicy(const PolicyOptions &o) : opts(o) {}
  const char *name() const override {
    if (opts.baseline == BaselineMode::Greedy)
      return "gavel-greedy";
    return opts.gavel == GavelObjective::MaxMin ? "gavel" : "gavel-sum";
  }
  double roundSeconds() const override { return 360; }
  void schedule(SimContext &ctx) override;

private:
  /// The fast mode's max-min shares by progressive filling.
  std::vector<std::vector<double>>
  fill(const SchedCluster &c,
       const std::vector<std::vector<const JobOption *>> &opt,
       const std::vector<std::vector<double>> &tput, double requested) const;
  PolicyOptions opts;
  bool warned = false;
};

std::vector<std::vector<double>> GavelPolicy::fill(
    const SchedCluster &c,
    const std::vector<std::vector<const JobOption *>> &opt,
    const std::vector<std::vector<double>> &tput, double requested) const {
  size_t n = opt.size(), types = c.types().size();
  double step = std::clamp(double(c.totalGpus()) / requested / 8, 1.0 / 256,
                           1.0 / 16);
  std::vector<double> room(types);
  for (size_t t = 0; t < types; ++t)
    room[t] = double(c.types()[t].total);
  std::vector<std::vector<double>> x(n, std::vector<double>(types, 0));
  std::vector<double> level(n, 0), share(n, 0);
  using Entry = std::pair<double, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (size_t k = 0; k < n; ++k)
    heap.push({0, k});
  while (!heap.empty()) {
    size_t k = heap.top().second;
    heap.pop();
    if (share[k] + step > 1 + 1e-12)
      continue;
    int bestType = -1;
    for (size_t t = 0; t < types; ++t)
      if (opt[k][t] &&
          room[t] + 1e-9 >= step * double(opt[k][t]->totalGpus()) &&
          (bestType < 0 || tput[k][t] > tput[k][bestType]))
        bestType = int(t);
    if (bestType < 0)
      continue; // frozen: no type has room
    x[k][bestType] += step;
    share[k] += step;
    room[bestType] -= step * double(opt[k][bestType]->totalGpus());
    level[k] += step * tput[k][bestType];
    heap.push({level[k], k});
  }
  return x;
}

void GavelPolicy::schedule(SimContext &ctx) {
  const std::vector<int> &active = ctx.active();
  auto &jobs = ctx.jobs();
  const SchedCluster &c = ctx.cluster();
  size_t n = active.size(), types = c.types().size();
  // The user's option on each type (at most one per type), its throughput
  // normalised by the job's best.
  std::vector<std::vector<const JobOption *>> opt(
      n, std::vector<const JobOption *>(types, nullptr));
  std::vector<std::vector<double>> tput(n, std::vector<double>(types, 0));
  double requested = 0;
  for (size_t k = 0; k < n; ++k) {
    const SimJob &j = jobs[active[k]];
    double best = 0;
    for (const JobOption &o : j.userOptions) {
      opt[k][o.gpus[0].type] = &o;
      best = std::max(best, 1 / o.stepSeconds);
    }
    for (size_t t = 0; t < types; ++t)
      if (opt[k][t])
        tput[k][t] = 1 / opt[k][t]->stepSeconds / best;
    requested += double(j.userOptions.front().totalGpus());
  }
  std::vector<std::vector<double>> x;
  if (opts.baseline == BaselineMode::Program) {
    std::vector<std::vector<int64_t>> count(n, std::vector<int64_t>(types, 0));
    std::vector<int64_t> capacity(types);
    for (size_t t = 0; t < types; ++t)
      capacity[t] = c.types()[t].total;
    for (size_t k = 0; k < n; ++k)
      for (size_t t = 0; t < types; ++t)
        if (opt[k][t])
          count[k][t] = opt[k][t]->totalGpus();
    auto lp = gavelShares(tput, count, capacity, opts.gavel, opts.solverSeconds);
    if (lp)
      x = std::move(*lp);
    else if (!warned) { // fall back to the fast mode; say so once
      llvm::errs() << "frenzy-sched: warning: gavel: "
                   << llvm::toString(lp.takeError())
                   << "; this round uses progressive filling\n";
      warned = true;
    } else
      llvm::consumeError(lp.takeError());
  }
  if (x.empty())
    x = fill(c, opt, tput, requested);
  // Rounds: priorities from the allocation and the rounds received.
  struct Pair {
    double priority;
    size_t job;
    int type;
  };
  std::vector<Pair> pairs;
  for (size_t k = 0; k < n; ++k) {
    const SimJob &j = jobs[active[k]];
    for (size_t t = 0; t < types; ++t) {
      if (x[k][t] <= 0)
        continue;
      double received = j.roundsOnType[t] / std::max(1.0, j.roundsActive);
      pairs.push_back({received > 0 ? x[k][t] / received : 1e30 * x[k][t], k,
                       int(t)});
    }
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Pair &a, const Pair &b) {
                     return a.priority > b.priority;
                   });
  std::vector<int64_t> free(types);
  for (size_t t = 0; t < types; ++t)
    free[t] = c.types()[t].total;
  std::vector<const JobOption *> target(n, nullptr);
  for (const Pair &p : pairs) {
    int64_t need = opt[p.job][p.type]->totalGpus();
    if (target[p.job] || free[p.type] < need)
      continue;
    target[p.job] = opt[p.job][p.type];
    free[p.type] -= need;
  }
  std::vector<const std::vector<JobOption> *> none(n, nullptr);
  static const std::vector<JobOption> empty;
  for (auto &f : none)
    f = &empty; // a fixed request never shrinks
  applyTargets(ctx, target, none);
}

} // namespace

std::unique_ptr<Policy> frenzy::sched::makeGavelPolicy(const PolicyOptions &o) {
  return std::make_unique<GavelPolicy>(o);
}
