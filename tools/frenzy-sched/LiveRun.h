//===- LiveRun.h - run a queue for real on CPU ranks ------------*- C++ -*-===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_LIVERUN_H
#define FRENZY_TOOLS_FRENZY_SCHED_LIVERUN_H

#include "frenzy/Scheduler/Simulator.h"

namespace frenzy::sched {

struct LiveOptions {
  std::string dir;          // plans, cluster files and logs of each job
  std::string frenzyOpt;    // makes each job's plan for its placement
  std::string frenzyLaunch; // runs it
  double limitSeconds = 600; // the whole queue; then every job is killed
  std::string data;          // a token file for frenzy-launch --data
};

/// Runs the queue in wall-clock time: arrivals at their times, the policy
/// at every arrival and completion, each placed job as a frenzy-launch
/// process (plan made first by frenzy-opt for the GPUs it was given; that
/// time counts in its JCT). Prints per job the simulator's predicted and
/// the measured start, finish and JCT. Event-driven policies only (a live
/// job is never moved). Returns the exit code.
int runLive(std::vector<SimJob> jobs, const SchedCluster &cluster,
            Policy &policy, const SimResult &predicted, const LiveOptions &o);

/// --start-cost=measure (LiveStartup.cpp): per GPU count the queue's
/// options use, the seconds before a new job's first step (its plan made
/// and run for one step on the idle cluster, less that step's predicted
/// time; median of `rounds`). Printed on stderr.
llvm::Expected<std::map<int64_t, double>>
measureStartup(const std::vector<SimJob> &jobs, const SchedCluster &cluster,
               const LiveOptions &o, int rounds);

} // namespace frenzy::sched

#endif
