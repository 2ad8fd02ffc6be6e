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

void frenzy::recordActionSeconds(plan::Plan &plan, const ClusterSpec &cluster) {
  std::vector<std::vector<double>> sec = predictedActionSeconds(plan, cluster);
  for (size_t r = 0; r < sec.size() && int(r) < plan.ranks_size(); ++r) {
    plan::Rank *rank = plan.mutable_ranks(int(r));
    for (size_t k = 0; k < sec[r].size() && int(k) < rank->stream_size(); ++k)
      rank->mutable_stream(int(k))->set_predicted_seconds(sec[r][k]);
  }
}
