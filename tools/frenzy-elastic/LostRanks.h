//===- LostRanks.h - after a job went wrong, which ranks and nodes are gone -*- C++ -*-===//
//
// When a rank dies or a rank's communication with a peer fails, the
// supervisor stops the whole job and then works out what was lost:
//  - the ranks that vanished without a word: their status file
//    (frenzy-launch --status-dir) still says `starting` or `running`. A rank
//    ended by its launcher or by the supervisor (SIGTERM) says `ended`, one
//    that failed on its own error `failed`, so neither is taken for lost;
//  - on a plan over hosts, the nodes that do not answer frenzy-launch's
//    probe (`frenzy-launch PLAN --probe-nodes`, through the same launch
//    agent and the same connect-back as a launch): a node whose link is cut.
// A node all of whose ranks vanished, or that does not answer, is a lost
// node and leaves whole; a rank that vanished alone takes its device.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_ELASTIC_LOSTRANKS_H
#define FRENZY_TOOLS_ELASTIC_LOSTRANKS_H

#include "Membership.h"
#include "PlanInfo.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace frenzy::elastic {

/// One rank's status file (ElasticHooks.h in frenzy-launch).
struct RankState {
  pid_t pid = 0;
  std::string host, state;
  int64_t step = -1;
};

std::optional<RankState> readRankState(const std::string &path);

/// The ranks of `ranks` whose status file in `statusDir` says `starting` or
/// `running` (read after the job was stopped).
std::vector<int> silentRanks(const std::string &statusDir, size_t ranks);

/// The nodes of `planPath` that do not answer `frenzy-launch PLAN
/// --probe-nodes` (with `launchOptions`, within `timeout` seconds):
/// (node, "(host H) <why>" from frenzy-launch's line on it).
std::vector<std::pair<std::string, std::string>>
probeNodes(const std::string &frenzyLaunch, const std::string &planPath,
           const std::vector<std::string> &launchOptions, double timeout);

/// What a loss takes away, per node, and how to say it.
struct Loss {
  std::vector<int> ranks; // vanished
  std::vector<std::pair<std::string, std::string>> unreachable;
  /// Nodes that leave whole (every rank vanished, or unreachable).
  std::vector<std::string> wholeNodes() const;
  /// Devices lost per node: a whole node's `count` from `file`, else one
  /// per vanished rank.
  std::map<std::string, int> devices(const PlanInfo &info,
                                     const Membership &file) const;
  /// "rank 3 (n1, device 1) died", "node n2 lost: ranks 2, 3 (all of its
  /// ranks) died", "node n2 lost: it does not answer (host H) <why>".
  std::string describe(const PlanInfo &info, int signal) const;
  const PlanInfo *plan = nullptr;
};

} // namespace frenzy::elastic

#endif
