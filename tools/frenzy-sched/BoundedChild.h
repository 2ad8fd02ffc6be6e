//===- BoundedChild.h - a child process with a deadline ---------*- C++ -*-===//
//
// The Slurm backend's commands (sbatch, squeue, ...) and its plan step run
// as child processes that may hang (a controller that does not answer, a
// frenzy-opt that never ends): each runs in a process group of its own,
// its output is collected, and past the deadline the whole group is killed.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_BOUNDEDCHILD_H
#define FRENZY_TOOLS_FRENZY_SCHED_BOUNDEDCHILD_H

#include <functional>
#include <string>
#include <vector>

namespace frenzy::sched {

struct ChildResult {
  int status = -1;       // exit code; 128+N after signal N
  bool timedOut = false; // killed at the deadline
  std::string out, err;  // what it wrote to stdout and stderr
};

/// Forks; the child runs `body` (its stdout and stderr are pipes read by
/// the caller, other descriptors closed) and exits with its result; `body`
/// may exec. Waits at most `timeoutS` seconds.
ChildResult runChild(const std::function<int()> &body, double timeoutS);

/// For `body`: execs argv[0] (searched in PATH) or reports why not (127).
int execArgv(const std::vector<std::string> &argv);

} // namespace frenzy::sched

#endif
