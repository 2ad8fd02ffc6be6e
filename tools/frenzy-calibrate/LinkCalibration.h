//===- LinkCalibration.h - measure a cluster's links into its topology -*- C++ -*-===//
//
// frenzy-calibrate --cluster=C.yaml: one rank per node of the cluster file,
// started on the nodes' hosts the way frenzy-launch starts a plan's ranks
// (tools/frenzy-launch/HostLaunch.h: probe through the launch agent, then
// mpirun with a hostfile in node order), measures every node pair and the
// all-reduce across the nodes (NetworkBench.h), and writes a copy of the
// cluster file whose topology: section has the measured figures (pairs:
// and allreduce:, each marked measured: true). The user's file is never
// replaced unless -o names it. docs/multinode.md, "Measured links".
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_CALIBRATE_LINKCALIBRATION_H
#define FRENZY_TOOLS_CALIBRATE_LINKCALIBRATION_H

#include "NetworkBench.h"

#include <string>

namespace frenzy::calibrate {

struct LinkOptions {
  std::string cluster, out; // out "": CLUSTER with .links.yaml
  bool force = false;       // replace an existing `out`
  std::string launchAgent;  // as frenzy-launch --launch-agent
  int64_t launchTimeout = 60;
  NetworkSettings net;
};

/// The launcher's side: measures and writes the new cluster file; returns
/// the exit code. Throws one line for bad input (a cluster file without
/// hosts, an output that exists, a node that does not answer).
int calibrateLinks(const LinkOptions &o);

/// A rank's side (`--network-rank --cluster=C.yaml`): checks that it runs on
/// its node (rank r on the file's node r), then measureNetworkRank.
int networkRank(const LinkOptions &o);

} // namespace frenzy::calibrate

#endif
