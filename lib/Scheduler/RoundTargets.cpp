//===- RoundTargets.cpp - apply a round's target allocation ---------------===//
//
// Gavel and Sia compute a whole new allocation each round against per-type
// GPU counts; turning it into node placements is shared. Keeping jobs whose
// allocation did not change on their GPUs is what both papers do (Gavel's
// lease renewal, Sia's restart-aware objective): only changed jobs pay the
// checkpoint-restart cost.
//
//===----------------------------------------------------------------------===//
#include "Policies.h"

#include <algorithm>

using namespace frenzy;
using namespace frenzy::sched;

void frenzy::sched::applyTargets(
    SimContext &ctx, const std::vector<const JobOption *> &target,
    const std::vector<const std::vector<JobOption> *> &fallback) {
  const std::vector<int> active = ctx.active();
  auto &jobs = ctx.jobs();
  std::vector<size_t> toStart;
  for (size_t k = 0; k < active.size(); ++k) {
    SimJob &j = jobs[active[k]];
    if (j.state == SimJob::State::Running) {
      if (target[k] == j.running)
        continue;
      ctx.stop(active[k]);
    }
    if (target[k])
      toStart.push_back(k);
  }
  std::stable_sort(toStart.begin(), toStart.end(), [&](size_t a, size_t b) {
    return target[a]->totalGpus() > target[b]->totalGpus();
  });
  for (size_t k : toStart) {
    if (ctx.start(active[k], *target[k], Fit::BestFit))
      continue;
    const JobOption *best = nullptr;
    for (const JobOption &o : *fallback[k])
      if (o.totalGpus() < target[k]->totalGpus() && ctx.cluster().fits(o) &&
          (!best || o.stepSeconds < best->stepSeconds))
        best = &o;
    if (best)
      ctx.start(active[k], *best, Fit::BestFit);
  }
}
