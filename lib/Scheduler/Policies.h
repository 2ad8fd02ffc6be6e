//===- Policies.h - the scheduling policies (internal) ----------*- C++ -*-===//
#ifndef FRENZY_LIB_SCHEDULER_POLICIES_H
#define FRENZY_LIB_SCHEDULER_POLICIES_H

#include "frenzy/Scheduler/Simulator.h"

namespace frenzy::sched {

std::unique_ptr<Policy> makeFifoPolicy();
std::unique_ptr<Policy> makeGavelPolicy(const PolicyOptions &o);
std::unique_ptr<Policy> makeSiaPolicy(const PolicyOptions &o);
std::unique_ptr<Policy> makeFrenzyPolicy(bool realloc);
std::unique_ptr<Policy> makeAdaptivePolicy(const PolicyOptions &o);

/// Round-based policies decide a target option (or none) per active job;
/// this applies it: jobs whose target is what they run keep their GPUs (no
/// restart), the other running jobs stop, then the new targets start,
/// largest first, best-fit; a target that no longer fits (fragmentation)
/// falls back to the job's fastest smaller option of `fallback` that fits.
/// `target` is indexed like ctx.active().
void applyTargets(SimContext &ctx,
                  const std::vector<const JobOption *> &target,
                  const std::vector<const std::vector<JobOption> *> &fallback);

/// One round's assignment problem (Sia's program): each job takes at most
/// one of its candidates; a candidate uses `count` GPUs of `type` and is
/// worth `value`; GPUs of each type are limited to `capacity`.
struct Candidate {
  const JobOption *option = nullptr;
  int type = 0;
  int64_t count = 0;
  double value = 0;
};
struct Assignment {
  std::vector<std::vector<Candidate>> jobs;
  std::vector<int64_t> capacity;
};
/// Greedy: repeatedly the move with the largest value gain per extra GPU
/// (a lazy priority queue); returns the chosen candidate per job, -1 none.
std::vector<int> assignGreedy(const Assignment &a);
/// The integer program: maximise the sum of chosen values, binary x per
/// candidate, one per job, capacity per type; seeded with `start`.
llvm::Expected<std::vector<int>> assignMilp(const Assignment &a,
                                            const std::vector<int> &start,
                                            double seconds);

/// Gavel's program: time shares x[j][t] in [0, 1], sum_t x[j][t] <= 1,
/// sum_j count[j][t] x[j][t] <= capacity[t]; `tput[j][t]` is job j's
/// normalised throughput on t (0: cannot run there). Returns x.
llvm::Expected<std::vector<std::vector<double>>>
gavelShares(const std::vector<std::vector<double>> &tput,
            const std::vector<std::vector<int64_t>> &count,
            const std::vector<int64_t> &capacity, GavelObjective objective,
            double seconds);

} // namespace frenzy::sched

#endif
