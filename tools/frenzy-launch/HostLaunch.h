//===- HostLaunch.h - start a plan's ranks on the hosts of its node map -*- C++ -*-===//
#ifndef FRENZY_TOOLS_LAUNCH_HOSTLAUNCH_H
#define FRENZY_TOOLS_LAUNCH_HOSTLAUNCH_H

#include "LaunchOptions.h"

#include <string>
#include <utility>
#include <vector>

namespace frenzy::rt {

/// Whether the plan's nodes name hosts (the cluster file's `host:`): then
/// its ranks start on those hosts, not all on this machine.
bool planNamesHosts(const plan::Plan &p);

/// Checks that every node answers through the launch agent, then runs
/// mpirun over the hosts (rank r on its plan node's host, in plan order) and
/// returns its exit status. A node that does not answer within
/// --launch-timeout is one error naming it.
int launchOnHosts(const Options &o, const plan::Plan &p);

/// The seconds a rank of a plan over hosts waits for a peer when neither
/// --comm-timeout nor FRENZY_COMM_TIMEOUT says (a link that drops mid-step
/// then ends the job; no plan's step waits this long for a peer).
constexpr int kHostCommTimeout = 120;

/// Every plan node that does not answer the probe through the launch agent
/// within --launch-timeout: (node, one line naming it and why).
std::vector<std::pair<std::string, std::string>>
unreachableNodes(const Options &o, const plan::Plan &p);

/// The host of plan node `node` ("" when the plan names none).
std::string hostOfNode(const plan::Plan &p, const std::string &node);

/// Throws unless this process runs on its plan node: its hostname or one of
/// its addresses is the host of its rank's node. The rank is the one its
/// MPI launcher gave it (from the environment: called before MPI_Init, so
/// that a misplaced rank never joins the job). Nothing to check when the
/// plan names no hosts or no launcher named a rank.
void checkOnPlanNode(const plan::Plan &p);

} // namespace frenzy::rt

#endif
