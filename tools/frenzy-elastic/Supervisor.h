//===- Supervisor.h - keep a training job running as devices come and go -===//
//
// The loop of frenzy-elastic (docs/elastic.md): plan with frenzy-opt for the
// devices present, start the ranks with frenzy-launch, watch them, and on a
// change of membership re-plan and resume from the last complete
// checkpoint:
//  - leave: a rank's process dies (mpirun's report, or its pid from the
//    rank status files vanishing), a rank's communication with a peer fails
//    (FRENZY_COMM_TIMEOUT: a node's link cut), or the cluster file loses
//    devices: the job is stopped at once and the lost devices are left out
//    (the ranks that vanished without a word, by their status files; a node
//    all of whose ranks did, or that does not answer frenzy-launch's probe,
//    leaves whole: LostRanks.h);
//  - join: the cluster file gains devices (its contents are polled), or
//    SIGHUP (or SIGUSR1) says the file is to be read again (devices lost
//    earlier count as back): the ranks stop cleanly after their next checkpoint
//    (a stop file they look for), then the job is re-planned with the new
//    devices.
// Every transition is logged on a few `frenzy-elastic:` lines: what
// changed, the new plan (ranks, layout), steps lost, seconds from the
// detection to the first new step, predicted tokens/s before and after.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_ELASTIC_SUPERVISOR_H
#define FRENZY_TOOLS_ELASTIC_SUPERVISOR_H

#include "Membership.h"

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::elastic {

struct ElasticOptions {
  std::string model, cluster, checkpointDir, runDir, data;
  int64_t steps = 0, checkpointEvery = 0;
  std::vector<std::string> planOptions;   // passed to frenzy-opt
  std::vector<std::string> launchOptions; // passed to frenzy-launch
  std::string frenzyOpt, frenzyLaunch;
  // For plans whose nodes name hosts, how frenzy-launch reaches them
  // (--launch-agent, --launch-timeout) travels in launchOptions; the
  // supervisor's probe after a rank's communication error passes them on.
  double launchTimeout = 60;
  double planTimeout = 600;  // seconds one frenzy-opt run may take
  double stallTimeout = 600; // seconds without progress before giving up
  double stopGrace = 10;     // seconds a job gets to end after a loss
  int maxRestarts = 20;
};

/// Parses frenzy-elastic's command line (ElasticError on bad input).
ElasticOptions parseElasticArgs(int argc, char **argv);

/// Runs the job to its last step; returns the exit status (non-zero after
/// an error, which it has printed as one line).
int supervise(const ElasticOptions &o);

} // namespace frenzy::elastic

#endif
