//===- SpeedEmulation.h - CPU ranks that run at a GPU's pace ----*- C++ -*-===//
//
// frenzy-launch --emulate-speed: each rank's forward and backward take
// `factor` times their CPU time (the rank sleeps the difference after the
// compute), so a plan for GPUs of different speeds shows its heterogeneous
// timeline, and its bubbles, on this machine's CPU ranks. Sleeping, not
// spinning: the emulated GPU time leaves the core to the other ranks, as a
// busy GPU leaves its host's CPU free. The target is the compute's CPU
// time, not its wall time, so a rank preempted by other work on a shared
// machine is not slowed twice.
//
// Factors: `--emulate-speed=R:F,...` names them per rank (unnamed ranks
// 1). `--emulate-speed` alone (or `=plan:BASE`) takes them from the plan:
// after two unscaled steps each rank's forward and backward CPU time per
// micro-batch is measured, and from then on each rank's forward and
// backward take its stage's predicted seconds per micro-batch times one
// common scale (split between forward and backward as the rank's CPU times
// split), so the CPU ranks run the plan's predicted timeline, slowed by
// that scale. The scale puts the smallest factor (emulated over CPU time)
// at BASE (default 3): every rank then sleeps most of its compute, and
// ranks outnumbering cores do not slow each other; `=scale:S` gives the
// scale itself (runs to compare then share one timeline). A fixed
// duration, not a multiple of each call's CPU time, keeps a noisy
// measurement from moving the timeline.
//
// An emulated GPU runs the whole plan at its predicted pace, not only its
// kernels: when the plan records each action's predicted seconds
// (frenzy-opt does, from the timeline simulation that makes the predicted
// trace), every action takes that x the scale: forwards and backwards,
// transfers (a send before posting it, a receive once its message is
// there), the reductions and the optimizer once their collective is done,
// the tied-parameter sync. Without them the transfers, the optimizer and
// the all-reduces would run at CPU speed against a compute slowed ~10^3x,
// i.e. nearly free, and the measured bubbles would be those of a device
// with an infinitely fast network and optimizer. Older plans (no action
// times) get the stage's time split over forward and backward, as before.
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_SPEEDEMULATION_H
#define FRENZY_RUNTIME_DIST_SPEEDEMULATION_H

#include "plan.pb.h"

#include <string>
#include <vector>

namespace frenzy::rt {

/// Whether every forward and backward of the plan's streams has its
/// predicted duration (Action.predicted_seconds, frenzy-opt's timeline
/// simulation): then plan emulation plays every action's predicted time.
bool predictsActions(const plan::Plan &p);
/// Each rank's stage's predicted forward + backward seconds per
/// micro-batch: its actions' (predictsActions), else the stage's.
/// Throws when the plan holds no prediction for a rank.
std::vector<double> predictedPerMicroBatch(const plan::Plan &p);
/// The scale (emulated seconds per predicted second) that puts the
/// smallest factor (emulated over measured CPU time per micro-batch,
/// `cpuPerMicroBatch`) at `base`: every rank sleeps at least (base - 1) /
/// base of its compute.
double timelineScale(const std::vector<double> &predicted,
                     const std::vector<double> &cpuPerMicroBatch, double base);
/// The mode of a --emulate-speed value: "plan" or "plan:BASE" (base > 0),
/// "scale:S" (scale > 0; emulated seconds per predicted second, the same
/// timeline in every run), else R:F factors (both 0).
struct PlanEmulation {
  double base = 0, scale = 0;
};
PlanEmulation planEmulation(const std::string &spec);

/// "R:F,..." for a plan of `ranks` ranks. Throws with one line on a
/// malformed list.
std::vector<double> parseSpeedFactors(const std::string &spec, int ranks);

/// This thread's CPU time, seconds.
double threadCpuSeconds();
/// Sleeps until `start + factor * cpu - debt` (steady-clock seconds) and
/// returns the seconds slept. `debt` carries what earlier calls ran over
/// (a loaded machine wakes a sleeper late, or preempts the compute): later
/// calls sleep that much less, so the rank's total follows factor x CPU.
double emulateUntil(double start, double cpu, double factor, double &debt);
/// The same for a fixed duration: sleeps until `start + want - debt`.
double emulateFor(double start, double want, double &debt);
double steadySeconds();

/// Plan emulation of every action (SpeedEmulation.h's header comment):
/// an action takes its Action.predicted_seconds x `scale`.
struct ActionClock {
  double scale = 0; ///< 0: off
  double debt = 0;  ///< what earlier sleeps ran over (emulateFor)
  bool on(const plan::Action &a) const {
    return scale > 0 && a.predicted_seconds() > 0;
  }
  /// Sleeps until `start` + predicted x scale + `waited` (seconds inside
  /// the window spent waiting for other ranks) - debt; returns the seconds
  /// slept (0 when off).
  double run(const plan::Action &a, double start, double waited = 0);
  /// After the real work that follows run()'s sleep (posting a send, a
  /// receive's copy): its time ran over the prediction, so it goes to the
  /// debt and later sleeps pay it back.
  void settle(const plan::Action &a);

private:
  double end = 0;
};

} // namespace frenzy::rt

#endif
