//===- Policies.h - the scheduling policies (internal) ----------*- C++ -*-===//
#ifndef FRENZY_LIB_SCHEDULER_POLICIES_H
#define FRENZY_LIB_SCHEDULER_POLICIES_H

#include "frenzy/Scheduler/Simulator.h"

namespace frenzy::sched {

std::unique_ptr<Policy> makeFifoPolicy();
std::unique_ptr<Policy> makeGavelPolicy();
std::unique_ptr<Policy> makeSiaPolicy();
std::unique_ptr<Policy> makeFrenzyPolicy(bool realloc);

/// Round-based policies decide a target option (or none) per active job;
/// this applies it: jobs whose target is what they run keep their GPUs (no
/// restart), the other running jobs stop, then the new targets start,
/// largest first, best-fit; a target that no longer fits (fragmentation)
/// falls back to the job's fastest smaller option of `fallback` that fits.
/// `target` is indexed like ctx.active().
void applyTargets(SimContext &ctx,
                  const std::vector<const JobOption *> &target,
                  const std::vector<const std::vector<JobOption> *> &fallback);

} // namespace frenzy::sched

#endif
