//===- ContentionBench.h - kernels slowed by the other ranks ----*- C++ -*-===//
//
// The kernel rates of a profile are measured by one process alone. A plan
// of several CPU ranks runs them together: with a core each, they share
// the memory system; with more ranks than cores, the ranks of one core
// take turns and each finds the caches filled by the others. Both slow the
// same kernels down. Measured as the CPU time of a reference step in k x
// cores processes (bound round-robin to the cores, each yielding its core
// after every step as a rank does when it waits) against one process
// alone, for k = 1, 2, 3.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_CALIBRATE_CONTENTIONBENCH_H
#define FRENZY_TOOLS_CALIBRATE_CONTENTIONBENCH_H

#include <string>
#include <vector>

namespace frenzy::calibrate {

struct Contention {
  /// (ranks per core, CPU time of a step / alone); empty: not measured.
  std::vector<std::pair<int, double>> slowdown;
  std::string what; // the step times, for the profile's comment
};

/// Runs the step of the one-rank plan `planPath` in processes as above;
/// `cores`: the machine's. Empty where it has one core or a child fails.
Contention measureContention(const std::string &planPath, int cores,
                             bool quick);

/// A rank that gets its core back after other ranks ran finds its state
/// (parameters, optimizer moments, buffers) evicted from the caches by
/// theirs, and pays for reading it again in its first kernels. Measured as
/// the extra CPU time of the reference step, alone, after `evicted` bytes
/// of other data were written (4 to 64 MiB), for the parameter bytes the
/// reference updates (`stateBytes`; a rank's cost scales with its own).
struct ColdTurn {
  double stateBytes = 0;
  std::vector<std::pair<double, double>> extra; // (evicted bytes, seconds)
  std::string what;
};
ColdTurn measureColdTurn(const std::string &planPath, int cores, bool quick);

/// A rank asleep in a wait whose core has nothing else to run: the core
/// idles (a virtual CPU halts), and waking it costs more than a switch on
/// a busy one. Seconds from a futex wake on one core to the sleeper
/// running on another, idle one (median of many); 0 on one core.
double measureIdleWake(int cores, bool quick);

} // namespace frenzy::calibrate

#endif
