//===- SiaPolicy.cpp - goodput-based reallocation each round (Sia) --------===//
//
// Sia (Jayaram Subramanya et al., SOSP'23): every 60-second round it
// re-decides every job's GPU type and count from goodput estimates,
// restart-aware:
//  - configurations: one GPU type per job (Sia never mixes types within a
//    job), any count the job's option table has on that type;
//  - a job's goodput on a configuration, normalised by its goodput on its
//    smallest configuration (Sia's normalisation makes jobs comparable);
//    with a fixed global batch goodput is throughput;
//  - objective: sum over jobs of a concave utility of normalised goodput,
//    u = 1 + (sqrt(g) - 1) for an allocated job and 0 otherwise (Sia's
//    fairness power p = 0.5 applied to goodput above the minimum; the 1
//    rewards running a job at all), with the restart penalty Sia takes
//    from Pollux: a running job's goodput on any other configuration is
//    scaled by (age - restarts x delta) / (age + delta), delta the
//    checkpoint-restart cost and age the time since it first started;
//  - Sia solves a MILP; here the same objective is maximised greedily by
//    marginal utility per GPU (a lazy priority queue of each job's best
//    next step), which is optimal for concave separable utilities with
//    a single resource and a good approximation per type.
//
//===----------------------------------------------------------------------===//
#include "Policies.h"

#include <algorithm>
#include <cmath>
#include <queue>

using namespace frenzy;
using namespace frenzy::sched;

namespace {

class SiaPolicy : public Policy {
public:
  const char *name() const override { return "sia"; }
  double roundSeconds() const override { return 60; }
  void schedule(SimContext &ctx) override;
};

void SiaPolicy::schedule(SimContext &ctx) {
  const std::vector<int> &active = ctx.active();
  auto &jobs = ctx.jobs();
  const SchedCluster &c = ctx.cluster();
  size_t n = active.size();
  std::vector<double> base(n, 0);
  for (size_t k = 0; k < n; ++k) {
    const JobOption *smallest = nullptr;
    for (const JobOption &o : *jobs[active[k]].options)
      if (!o.mixed() &&
          (!smallest || o.totalGpus() < smallest->totalGpus() ||
           (o.totalGpus() == smallest->totalGpus() &&
            o.stepSeconds < smallest->stepSeconds)))
        smallest = &o;
    base[k] = smallest ? 1 / smallest->stepSeconds : 0;
  }
  auto utility = [&](size_t k, const JobOption *o) {
    if (!o)
      return 0.0;
    const SimJob &j = jobs[active[k]];
    double g = 1 / o->stepSeconds / base[k];
    if (j.state == SimJob::State::Running && j.running != o) {
      double age = ctx.now - j.firstStart, d = ctx.restartSeconds();
      g *= std::max(0.0, (age - double(j.restarts) * d) / (age + d));
    }
    return g > 0 ? 1 + (std::sqrt(g) - 1) : 0.0;
  };
  std::vector<int64_t> room(c.types().size());
  for (size_t t = 0; t < room.size(); ++t)
    room[t] = c.types()[t].total;
  std::vector<const JobOption *> choice(n, nullptr);
  std::vector<int> version(n, 0);
  // The job's best next step from its current choice: the option with the
  // largest utility gain per extra GPU that fits the per-type room.
  auto bestMove = [&](size_t k, double &value) -> const JobOption * {
    const JobOption *cur = choice[k], *best = nullptr;
    double u0 = utility(k, cur);
    int64_t g0 = cur ? cur->totalGpus() : 0;
    for (const JobOption &o : *jobs[active[k]].options) {
      if (o.mixed() || o.totalGpus() <= g0)
        continue;
      int t = o.gpus[0].type;
      int64_t have = room[t] + (cur && cur->gpus[0].type == t ? g0 : 0);
      if (o.totalGpus() > have)
        continue;
      double v = (utility(k, &o) - u0) / double(o.totalGpus() - g0);
      if (v > 0 && (!best || v > value))
        best = &o, value = v;
    }
    return best;
  };
  struct Entry {
    double value;
    size_t job;
    int version;
    const JobOption *option;
    bool operator<(const Entry &e) const { return value < e.value; }
  };
  std::priority_queue<Entry> heap;
  auto push = [&](size_t k) {
    double v = 0;
    if (const JobOption *o = bestMove(k, v))
      heap.push({v, k, ++version[k], o});
  };
  for (size_t k = 0; k < n; ++k)
    push(k);
  while (!heap.empty()) {
    Entry e = heap.top();
    heap.pop();
    if (e.version != version[e.job])
      continue;
    const JobOption *cur = choice[e.job];
    int t = e.option->gpus[0].type;
    int64_t have =
        room[t] + (cur && cur->gpus[0].type == t ? cur->totalGpus() : 0);
    if (e.option->totalGpus() > have) {
      push(e.job); // the room shrank since: find its next best
      continue;
    }
    if (cur)
      room[cur->gpus[0].type] += cur->totalGpus();
    room[t] -= e.option->totalGpus();
    choice[e.job] = e.option;
    push(e.job);
  }
  std::vector<const std::vector<JobOption> *> fallback(n);
  for (size_t k = 0; k < n; ++k)
    fallback[k] = jobs[active[k]].options;
  applyTargets(ctx, choice, fallback);
}

} // namespace

std::unique_ptr<Policy> frenzy::sched::makeSiaPolicy() {
  return std::make_unique<SiaPolicy>();
}
