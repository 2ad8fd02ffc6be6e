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
// micro-batch is measured, and each rank's factor makes that time
// proportional to its stage's predicted seconds per micro-batch (the
// device's speed and the stage's work together), so the CPU ranks run the
// plan's predicted timeline, slowed by one common scale. The scale puts
// the smallest factor at BASE (default 3): every rank then sleeps most of
// its compute, and ranks outnumbering cores do not slow each other.
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_SPEEDEMULATION_H
#define FRENZY_RUNTIME_DIST_SPEEDEMULATION_H

#include "plan.pb.h"

#include <string>
#include <vector>

namespace frenzy::rt {

/// Per rank: the factor that makes `cpuPerMicroBatch[r]` (measured) take
/// the time its stage's predicted_seconds asks for, times one scale that
/// puts the smallest factor at `base`. Throws when the plan holds no
/// predictions.
std::vector<double> timelineFactors(const plan::Plan &p,
                                    const std::vector<double> &cpuPerMicroBatch,
                                    double base);
/// "plan" or "plan:BASE": the base; otherwise 0.
double planEmulationBase(const std::string &spec);
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
double steadySeconds();

} // namespace frenzy::rt

#endif
