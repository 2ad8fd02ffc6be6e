//===- FrenzyPolicyImpl.h - the frenzy policy's class (private) -*- C++ -*-===//
//
// The FrenzyPolicy class and its constants, shared by its two source
// files: FrenzyPolicy.cpp (ordering and placement of waiting jobs) and
// FrenzyPolicyMoves.cpp (moving running jobs: give back, make room,
// preempt, shrink, grow). Not installed: makeFrenzyPolicy and
// makeAdaptivePolicy (Policies.h) are the interface.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_SCHEDULER_FRENZYPOLICYIMPL_H
#define FRENZY_LIB_SCHEDULER_FRENZYPOLICYIMPL_H

#include "Policies.h"

#include <algorithm>
#include <cmath>

namespace frenzy::sched::frenzy_policy {


constexpr double kEfficiencyFloor = 0.7;
constexpr double kScarcePenalty = 0.5;
constexpr double kWastePenalty = 0.05;
constexpr double kShrinkGuard = 10;   // x restart cost: min run between moves
constexpr size_t kShrinkPerDecision = 2;
constexpr size_t kLookahead = 16;  // jobs per decision that may wait
constexpr double kWaitGain = 0.8;  // only when that finishes them 20% sooner
// Adaptive growth and preemption: chosen on the training queues (synthetic
// seeds 1 and 2 at 8, 15 and 30 jobs/h, Philly from 2017-10-03), reported
// on held-out ones (docs/scheduler.md).
constexpr double kGrowFloor = 0.3;   // per-GPU throughput vs the job's best
constexpr double kGrowGain = 0.7;    // grow when it finishes in < 70% of now
constexpr double kGrowRestarts = 2;  // ... counting this many restart costs
constexpr double kMakeRoomRatio = 8; // the shrunk job has 8x more work left
constexpr double kMakeRoomQueue = 1; // only while this few wait
constexpr double kPreemptRatio = 4;  // a stopped job has 4x the work left
constexpr double kPreemptGuard = 10; // x restart cost: min run before a stop
constexpr size_t kPreemptPerDecision = 4; // stops for jobs that fit nowhere
constexpr size_t kVictimTries = 4;   // running jobs tried per waiting job
constexpr double kUpgradeLoss = 0.6; // stopped job's loss, share of t_there

enum class Mode { Static, Realloc, Adaptive };

class FrenzyPolicy : public Policy {
public:
  explicit FrenzyPolicy(Mode mode) : mode(mode) {}
  const char *name() const override {
    return mode == Mode::Adaptive  ? "frenzy"
           : mode == Mode::Realloc ? "frenzy-static+realloc"
                                   : "frenzy-static";
  }
  void schedule(SimContext &ctx) override;

private:
  /// The job's best throughput per GPU, steps/s/GPU.
  static double bestPerGpu(const SimJob &j) {
    double best = 0;
    for (const JobOption &o : *j.options)
      best = std::max(best, 1 / (o.stepSeconds * double(o.totalGpus())));
    return best;
  }
  static double gpuSeconds(const SimJob &j) {
    return j.remainingSteps / bestPerGpu(j);
  }
  double score(const SimJob &j, const JobOption &o, const SchedCluster &c,
               const std::vector<int> &onlyOn) const;
  /// The fastest of `fitting` with more GPUs than `best`, above the growth
  /// floor, that finishes the job in under kGrowGain of `best`'s time;
  /// `best` when none. (More GPUs, not merely other ones: `best` already
  /// weighed scarce types and memory, and give-back returns extra GPUs.)
  const JobOption *grownOption(const SimJob &j, const JobOption &best,
                               const std::vector<const JobOption *> &fitting,
                               double perGpu) const {
    const JobOption *out = &best;
    for (const JobOption *o : fitting)
      if (o->totalGpus() > best.totalGpus() &&
          1 / (o->stepSeconds * double(o->totalGpus())) >= kGrowFloor * perGpu &&
          o->stepSeconds < kGrowGain * best.stepSeconds &&
          o->stepSeconds < out->stepSeconds)
        out = o;
    return out;
  }
  /// The option a job takes on the free GPUs: the best score among those
  /// whose throughput per GPU is at least floorFactor of the best the free
  /// GPUs offer it (the smallest when none); nullptr when none fits.
  /// Fills the fitting options and that best per-GPU throughput.
  const JobOption *choose(const SimJob &job, const SchedCluster &c,
                          const std::vector<int> &onlyOn, double floorFactor,
                          std::vector<const JobOption *> *fitting,
                          double *perGpu) const;
  /// Adaptive: an option for waiting job j on GPUs of a running job with
  /// kPreemptRatio x more work left, which is stopped (and waits in line
  /// again), when j on it finishes enough sooner than on `best` (the free
  /// GPUs' option) to outweigh what the stopped job loses; else nullptr.
  const JobOption *upgrade(SimContext &ctx, int j, const JobOption &best,
                           const std::vector<int> &onlyOn);
  /// Running jobs a waiting job `w` may stop: at most kVictimTries, with
  /// kPreemptRatio x its work left or more, not moved within the guard, of
  /// no higher priority; most work left first.
  std::vector<int> victimsFor(SimContext &ctx, int w);
  bool preempted = false; // place() stopped a job: place again
  std::vector<std::pair<double, int>> victims; // this decision's, sorted
  bool victimsKnown = false;
  /// Places waiting jobs; returns how many still wait.
  size_t place(SimContext &ctx);
  /// Moves jobs holding more than a fair share of the cluster to smaller
  /// options while jobs wait; true when one moved.
  bool shrink(SimContext &ctx);
  void grow(SimContext &ctx, double floorFactor, double gain,
            double restarts);
  /// Adaptive: jobs that grew go back to the option they were placed on;
  /// true when one moved.
  bool giveBack(SimContext &ctx);
  /// Adaptive, shortest-remaining-first: a waiting job that fits nowhere
  /// gets GPUs from a running job with much more work left, which shrinks
  /// to a smaller option of the same type (still above the growth floor);
  /// true when one moved. Tried before preempt(): a shrink keeps the job
  /// running.
  bool makeRoom(SimContext &ctx);
  /// Adaptive, preemptive shortest-first: a waiting job that fits nowhere
  /// stops the running job with the most work left (at least
  /// kPreemptRatio x its own, in GPU-seconds at best efficiency) when that
  /// job's GPUs would let it start; the stopped job waits in line again
  /// (and may restart at once on what is left, a shrink). True when one
  /// stopped.
  bool preempt(SimContext &ctx);
  Mode mode;
};

} // namespace frenzy::sched::frenzy_policy

#endif
