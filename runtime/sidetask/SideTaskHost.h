//===- SideTaskHost.h - run side tasks only inside their slots --*- C++ -*-===//
//
// frenzy-launch's rank loop hands the host a slot (a plan's side-task slot,
// or the gap in front of a receive) with two bounds: a predicate that turns
// true when the main stream can go on (its receive has arrived: MPI_Iprobe)
// and a time limit (the slot's predicted duration on this rank's clock).
// The host runs side-task steps until either bound is reached, never
// starting a step it expects to end past the limit. What the main stream
// pays is measured: a step that was running when the main stream's input
// arrived delayed it by at most that step's length; a step that ended past
// the limit overran the slot (the task is paused, the overrun reported).
// A task that throws, exceeds its memory budget or (a process) dies is
// reported once and dropped; the main job goes on.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_SIDETASKHOST_H
#define FRENZY_RUNTIME_SIDETASK_SIDETASKHOST_H

#include "SideTask.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt {

/// One slot (mirrors the plan's SideTaskSlot, docs/sidetasks.md).
struct SideSlot {
  int task = -1;           // index into the host's tasks; -1: by priority
  double duration = 0;     // predicted seconds (before the time scale)
  int64_t steps = 0;       // at most this many task steps; 0: no cap
  int64_t memoryBytes = 0; // the task's budget here; 0: its own
};

/// What side tasks did (one main-job step, or the whole run).
struct SideReport {
  int64_t slots = 0;     // slots entered
  int64_t steps = 0;     // side-task steps completed
  double harvested = 0;  // seconds side tasks ran
  double delay = 0;      // bound on the main stream's delay, seconds
  double overrun = 0;    // seconds past slot limits
  int64_t overruns = 0;  // slots a task overran
  int64_t failures = 0;  // tasks that failed
  SideReport &operator+=(const SideReport &o);
};

struct SideTaskState {
  std::unique_ptr<SideTask> task;
  int64_t priority = 0;
  int64_t budget = 0;    // bytes; 0: none
  bool ready = false;    // initialised
  bool done = false;     // finished its work
  std::string failure;   // why it was dropped ("": healthy)
  int64_t steps = 0;
  double seconds = 0;
  double stepEstimate = 0; // running mean of one step's seconds
};

class SideTaskHost {
public:
  /// `report` receives one line per failure (default: stderr).
  SideTaskHost(std::vector<SideTaskState> tasks,
               std::function<void(const std::string &)> report = {});
  ~SideTaskHost();
  SideTaskHost(const SideTaskHost &) = delete;
  SideTaskHost &operator=(const SideTaskHost &) = delete;

  /// Initialises every task under its budget; one that cannot is reported
  /// and dropped.
  void init();
  /// Runs slot `s` from now until `ready()` returns true (null: never) or
  /// `limit` seconds have passed. Past the limit, while `ready()` is still
  /// false, steps no longer than the grace (setGrace) go on: the main
  /// stream is blocked anyway, and each such step delays it at most by its
  /// length.
  void runSlot(const SideSlot &s, const std::function<bool()> &ready,
               double limit);
  /// Longest step (seconds) that may start past a slot's limit while the
  /// main stream is still blocked; 0 (default): none.
  void setGrace(double seconds) { grace = seconds; }
  /// The report since the previous call (one main-job step), added to the
  /// run's total.
  SideReport takeStep();
  const SideReport &total() const { return sum; }
  const std::vector<SideTaskState> &tasks() const { return all; }
  /// Whether some task can still run.
  bool active() const;
  /// Finishes every task (also the failed ones); idempotent.
  void finishAll();

  static double now();

private:
  bool usable(size_t i) const;
  int pick(const SideSlot &s, double now, double deadline, bool late,
           bool blocked);
  void fail(SideTaskState &t, const std::string &why);
  /// One step; true when the slot is over (the main stream can go on, or
  /// the step overran the limit).
  bool runStep(SideTaskState &t, const SideSlot &s,
               const std::function<bool()> &ready, double deadline,
               bool late);
  bool runProcess(SideTaskState &t, const std::function<bool()> &ready,
                  double deadline);

  std::vector<SideTaskState> all;
  std::function<void(const std::string &)> report;
  SideReport step, sum;
  size_t rr = 0; // round robin among tasks of equal priority
  double grace = 0;
  bool finishedAll = false;
};

} // namespace frenzy::rt

#endif
