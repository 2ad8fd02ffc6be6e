//===- TraceGather.h - one trace from every rank ----------------*- C++ -*-===//
//
// Aligns each rank's trace clock with rank 0's before the first step, and
// gathers every rank's slices to rank 0 after the last, which writes the
// file. Ranks of one machine share a monotonic clock: their offset is the
// difference of their origins on it, exact. Ranks of several do not: the
// offset is estimated by ping-pong with rank 0, keeping the exchange with
// the shortest round trip (its midpoint error is at most half that round
// trip: microseconds between idle nodes, but milliseconds where ranks
// share a loaded core, too coarse for core-turns.test's no-overlap check).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_TRACEGATHER_H
#define FRENZY_RUNTIME_DIST_TRACEGATHER_H

#include "Comm.h"
#include "Trace.h"

namespace frenzy::rt {

/// Every rank calls it once, together: sets t's offset to rank 0's clock.
/// Returns the round trip of the kept exchange (microseconds; 0 on rank 0).
double alignTraceClock(Comm &comm, Trace &t);

/// Every rank calls it together; rank 0 gets every rank's serialize()
/// output in rank order, the others an empty vector.
std::vector<std::string> gatherTrace(Comm &comm, const std::string &mine);

} // namespace frenzy::rt

#endif
