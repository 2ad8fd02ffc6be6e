//===- TimelinePlayer.h - a plan's predicted steps played in time order -*- C++ -*-===//
//
// The second half of the predicted timeline (lib/Planning/
// TimelineSimulation.cpp builds each rank's steps from the plan and the
// device profiles): the ranks advance together in time, each as far as it
// can, receives waiting for their sends and collectives for their members,
// and ranks that share a core taking turns on it as frenzy-launch's ranks
// do (runtime/dist/CoreTurns.h). Internal to lib/Planning.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_PLANNING_TIMELINEPLAYER_H
#define FRENZY_LIB_PLANNING_TIMELINEPLAYER_H

#include "frenzy/Planning/TimelineSimulation.h"

#include <string>
#include <utility>
#include <vector>

namespace frenzy {
struct DeviceProfile;

namespace timeline {

using Args = std::vector<std::pair<std::string, double>>;

/// One predicted step of a rank's stream.
struct Op {
  enum Kind { Compute, Send, Recv, Collective } kind = Compute;
  std::string name, cat;
  double seconds = 0;      // busy time (a receive: the transfer)
  Args args;
  std::string key;         // Send/Recv: the message; Collective: its id
  int members = 0;         // Collective: ranks taking part
  int step = 0;            // which of the played steps
  std::string waitName;    // Recv/Collective: the wait slice's name
  double slot = 0;         // a side-task slot's predicted length (no work)
  double latency = 0;      // Collective: from the last arrival, core-free
  bool nodeSum = false;    // Collective: through shared memory (turns)
  double spin = 0;         // Recv: keeps its core this long while waiting
  int action = -1;         // its action's position in the rank's stream
};

/// What the player needs of a rank besides its steps.
struct PlayerRank {
  std::string core;       // "" : a core (or device) of its own
  std::string node;
  double peakBytes = 0;   // its predicted peak: what its turns evict
  double stateBytes = 0;  // the parameters it updates: what it re-reads
  const DeviceProfile *profile = nullptr; // cold turns; may be null
};

/// How long a rank waiting for its sends keeps a shared core (the
/// runtime's bound, runtime/dist/Comm.cpp).
constexpr double kSendSpin = 200e-6;

/// Plays every rank's steps (one training step each, repeated) and
/// returns the steady steps shown: slices, per-rank step and the bubbles.
PredictedTimeline play(std::vector<std::vector<Op>> oneStep,
                       const std::vector<PlayerRank> &ranks);

} // namespace timeline
} // namespace frenzy

#endif
