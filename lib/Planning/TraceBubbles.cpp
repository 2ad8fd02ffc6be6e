//===- TraceBubbles.cpp - idle intervals of a predicted timeline ----------===//
//
// The predicted trace shows each rank's bubbles as slices of their own:
// what is left of the step once every compute, communication and optimizer
// slice is laid on it (waits are idle time, side-task slots are not work
// the runtime does yet). These are the simulation's bubbles, with its
// transfers and copies; the bubble analysis (lib/Analysis/Bubbles) plays
// the partition's coarser stage times in the IR.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/TimelineSimulation.h"

#include <algorithm>

using namespace frenzy;

void frenzy::addBubbleSlices(PredictedTimeline &out,
                             const std::vector<double> &from,
                             const std::vector<double> &to) {
  std::vector<plan::TraceEvent> gaps;
  for (size_t r = 0; r < from.size(); ++r) {
    std::vector<std::pair<double, double>> busy;
    for (const plan::TraceEvent &e : out.events)
      if (e.pid == int(r) && e.cat != "wait" && e.cat != "step" &&
          e.cat != "side-task")
        busy.emplace_back(e.startUs, e.startUs + e.durUs);
    std::sort(busy.begin(), busy.end());
    double t = from[r] * 1e6, end = to[r] * 1e6;
    auto gap = [&](double a, double b) {
      if (b - a < 1e-3) // under a nanosecond: rounding, not idle
        return;
      plan::TraceEvent e;
      e.pid = int(r);
      e.tid = kBubbleThread;
      e.name = "bubble";
      e.cat = "bubble";
      e.startUs = a;
      e.durUs = b - a;
      gaps.push_back(std::move(e));
    };
    for (auto [a, b] : busy) {
      if (a > t)
        gap(t, std::min(a, end));
      t = std::max(t, b);
    }
    gap(t, end);
  }
  out.events.insert(out.events.end(), gaps.begin(), gaps.end());
}
