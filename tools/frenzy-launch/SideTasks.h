//===- SideTasks.h - frenzy-launch's side tasks and speed emulation -*- C++ -*-===//
//
// The rank loop's part of issue 14: builds this rank's side-task host from
// --side-task, sets --emulate-speed's factor, records each step's times and
// side-task report, and at the end gathers every rank's record to rank 0,
// which prints one summary line per rank and writes --side-report's JSON.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_LAUNCH_SIDETASKS_H
#define FRENZY_TOOLS_LAUNCH_SIDETASKS_H

#include "LaunchOptions.h"
#include "RankRunner.h"
#include "SpeedEmulation.h"

#include <memory>
#include <vector>

namespace frenzy::rt {

class SideRun {
public:
  /// Throws one line when an option is malformed (checked before the ranks
  /// start).
  static void check(const Options &o, const plan::Plan &p);
  SideRun(const Options &o, const plan::Plan &p, RankRunner &runner,
          int rank);
  ~SideRun();
  bool on() const { return enabled; }
  /// Every rank calls it after each step (with plan emulation, the second
  /// step's CPU times are shared: a collective).
  void afterStep(int64_t step, Comm &comm);
  /// Every rank calls it (a gather); rank 0 prints and writes the report.
  void finish(Comm &comm);

private:
  struct Step {
    int64_t step;
    StepTimes t;
    SideReport r;
  };
  const Options &o;
  const plan::Plan &p;
  RankRunner &runner;
  int rank;
  bool enabled = false;
  double factor = 1;
  std::vector<double> factors;  // every rank's, once known
  PlanEmulation emu;            // base or scale > 0: durations from the plan
  double scale = 0;             // the scale in use (emulated s per predicted s)
  std::unique_ptr<SideTaskHost> host;
  std::vector<int> planTasks; // the plan's side task -> the host's
  std::vector<Step> steps;
  std::string serialize() const;
};

} // namespace frenzy::rt

#endif
