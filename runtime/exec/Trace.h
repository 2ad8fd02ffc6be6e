//===- Trace.h - record a rank's measured timeline --------------*- C++ -*-===//
//
// frenzy-launch --trace=FILE: each rank records slices (forward and
// backward per micro-batch, transfers, reductions, the optimizer, waits)
// against its steady clock shifted by an offset to rank 0's clock
// (runtime/dist/TraceGather.cpp estimates it), and rank 0 writes every
// rank's slices as Chrome-trace JSON (plan/TraceFormat.h). Off, a run pays
// one null-pointer test per action: code takes a Trace* and records only
// when it is set.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_TRACE_H
#define FRENZY_RUNTIME_EXEC_TRACE_H

#include "plan/TraceFormat.h"

#include <array>
#include <chrono>
#include <string>
#include <vector>

namespace frenzy::rt {

class Trace {
public:
  explicit Trace(int pid) : pid(pid), origin(std::chrono::steady_clock::now()) {}

  /// Microseconds since this rank's origin (not yet aligned).
  double now() const {
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now() - origin)
        .count();
  }
  /// This process's CPU time in microseconds: a step's time on the CPU,
  /// which on a shared machine is what the step would take unpreempted.
  static double cpuNow();
  /// Adds to every recorded time: this rank's origin on rank 0's clock.
  void setOffset(double us) { offsetUs = us; }
  double offset() const { return offsetUs; }

  /// Records a slice from `startUs` (now()) until now.
  void slice(int tid, std::string name, const char *cat, double startUs,
             std::vector<std::pair<std::string, double>> args = {});

  /// Records a slice from `startUs` to `endUs` (both now() readings).
  void sliceBetween(int tid, std::string name, const char *cat,
                    double startUs, double endUs);

  /// Per-op-class kernel seconds the executor adds to (setClassTimes).
  double *classSeconds() { return classes.data(); }
  /// The class times accumulated since the last call, as slice args
  /// ("matmul_us", ...), reset to zero.
  std::vector<std::pair<std::string, double>> takeClassArgs();

  /// This rank's events as comma-separated JSON objects (with its names).
  std::string serialize(const std::string &processName) const;
  bool empty() const { return events.empty(); }

private:
  int pid;
  std::chrono::steady_clock::time_point origin;
  double offsetUs = 0;
  std::vector<plan::TraceEvent> events;
  std::array<double, plan::kNumOpClasses> classes{};
};

/// Records [construction, destruction) as a slice when `t` is set.
class TraceSpan {
public:
  TraceSpan(Trace *t, int tid, std::string name, const char *cat)
      : t(t), tid(tid), name(t ? std::move(name) : std::string()), cat(cat),
        start(t ? t->now() : 0) {}
  ~TraceSpan() {
    if (t)
      t->slice(tid, std::move(name), cat, start);
  }
  TraceSpan(const TraceSpan &) = delete;
  TraceSpan &operator=(const TraceSpan &) = delete;

private:
  Trace *t;
  int tid;
  std::string name;
  const char *cat;
  double start;
};

/// Checks that `path` can be written (creating or truncating it) and that
/// it is none of `owned` (files of the run: the plan, the data). Returns
/// an empty string, or why not.
std::string traceFileProblem(const std::string &path,
                             const std::vector<std::string> &owned);

/// Writes a trace file from every rank's serialize() output.
void writeTraceFile(const std::string &path, int ranks, int steps,
                    const std::vector<std::string> &rankEvents);

} // namespace frenzy::rt

#endif
