//===- TimelineSimulation.h - the predicted timeline of a plan --*- C++ -*-===//
//
// frenzy-opt --emit=trace: every rank's step as the cost model predicts it,
// in the format of frenzy-launch --trace (runtime/plan/TraceFormat.h). Each
// kernel is timed by its type's profile (measured by frenzy-calibrate, or
// the datasheet defaults) from the flops and bytes the plan records for it;
// the ranks' instruction streams are then played as the runtime plays
// them: a receive waits for its send, a DP all-reduce for every member of
// its group, the update's norm all-reduce for every rank. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_TIMELINESIMULATION_H
#define FRENZY_PLANNING_TIMELINESIMULATION_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "plan/TraceFormat.h"

#include "llvm/Support/raw_ostream.h"

namespace frenzy {

struct PredictedTimeline {
  std::vector<plan::TraceEvent> events; // one step, from 0
  std::vector<double> rankSeconds;      // each rank's step time
  double stepSeconds = 0;               // the slowest rank's
};

/// Plays one step of `plan` (one rank or several) on `cluster`'s devices.
PredictedTimeline simulateTimeline(const plan::Plan &plan,
                                   const ClusterSpec &cluster);

/// Per rank (plan order), per position of its stream: the action's busy
/// seconds in that simulation (what its slices last, waits aside). Empty
/// for a plan without stages (one rank, no stream; a one-rank plan of a
/// --global-batch has a stage and a stream of micro-batches).
std::vector<std::vector<double>>
predictedActionSeconds(const plan::Plan &plan, const ClusterSpec &cluster);

/// The predicted trace's third thread: idle intervals and side-task slots.
constexpr int kBubbleThread = 2;

/// Adds a "bubble" slice on kBubbleThread for every interval of rank r's
/// step [from[r], to[r]] (seconds, as the events' times) that no slice but
/// a wait covers.
void addBubbleSlices(PredictedTimeline &t, const std::vector<double> &from,
                     const std::vector<double> &to);

/// The timeline as Chrome-trace JSON.
void writePredictedTrace(const plan::Plan &plan, const PredictedTimeline &t,
                         llvm::raw_ostream &os);

} // namespace frenzy

#endif
