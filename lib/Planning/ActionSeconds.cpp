//===- ActionSeconds.cpp - each action's predicted seconds in plan.bin ----===//
//
// frenzy-opt records, in every action of every rank's stream, how long the
// timeline simulation (TimelineSimulation.cpp, the predicted trace) keeps
// the rank busy in it. frenzy-launch --emulate-speed=plan|scale plays these
// on CPU ranks (runtime/dist/SpeedEmulation.h): every action of an
// emulated device then takes its predicted time, not only the forwards and
// backwards, so the run reproduces the timeline the bubbles are predicted
// from. Only op durations are needed, not the play, so this is linear in
// the streams' length.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/TimelineSimulation.h"

using namespace frenzy;

/// Plans of more ranks get no action times. The simulation's ops look up
/// every rank's stage, node and groups by scanning the plan, so its cost
/// grows with ranks squared: 0.1 s at 1,000 ranks, ~0.5 s at 10,000,
/// ~400 s at 100,000 (bench/large_cluster.sh). A plan of thousands of
/// ranks is not one a CPU emulation (one process per rank) runs, and
/// without action times --emulate-speed scales forwards and backwards.
static constexpr int kMaxRanks = 4096;

void frenzy::recordActionSeconds(plan::Plan &plan, const ClusterSpec &cluster) {
  if (plan.ranks_size() > kMaxRanks)
    return;
  std::vector<std::vector<double>> sec = predictedActionSeconds(plan, cluster);
  for (size_t r = 0; r < sec.size() && int(r) < plan.ranks_size(); ++r) {
    plan::Rank *rank = plan.mutable_ranks(int(r));
    for (size_t k = 0; k < sec[r].size() && int(k) < rank->stream_size(); ++k)
      rank->mutable_stream(int(k))->set_predicted_seconds(sec[r][k]);
  }
}
