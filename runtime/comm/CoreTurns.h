//===- CoreTurns.h - CPU ranks that share a core take explicit turns -*- C++ -*-===//
//
// When a node runs more CPU ranks than it has cores (the README's six ranks
// on a two-core machine), the ranks of a core pass its "turn" among
// themselves instead of leaving the order to the kernel's scheduler: a rank
// computes only while it holds its core's turn, gives it up whenever it has
// to wait for another rank (a receive, a collective, its sends), and gets it
// back, once its wait is over, in a fixed order: the rank whose wait ended
// first (ties: the lower rank; the members of one shared-memory sum all
// end their wait at the sum's end, so they go in rank order). A rank that
// need not wait (its message is there) keeps it.
//
// Why: left to the scheduler, which core-mate runs after a collective
// varied from step to step and run to run, and ranks polling in MPI took
// cores from ranks with work (the README plan measured 10.3-12.8 ms a step
// against 8.7 predicted, each rank's idle time 5-30% of the step off). With
// turns the order is the one the predicted timeline plays
// (lib/Planning/TimelineSimulation.cpp: a freed core goes to the rank that
// became ready first), waiting ranks sleep instead of spinning, and the
// same plan gives the same per-rank timeline in every run.
//
// The state lives in an MPI-3 shared-memory window of the node (no files,
// freed with the window); a waiting rank sleeps on a futex of its core.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_CORETURNS_H
#define FRENZY_RUNTIME_DIST_CORETURNS_H

#include <mpi.h>

#include <cstdint>
#include <memory>

namespace frenzy::rt {

/// A shared window's base rounded up to a cache line (MPI promises no
/// alignment; every process maps the segment at a page boundary, so the
/// same offset is aligned in all of them). Windows allocate 64 bytes more.
inline void *alignedShared(void *base) {
  auto a = reinterpret_cast<uintptr_t>(base);
  return reinterpret_cast<void *>((a + 63) & ~uintptr_t(63));
}

class CoreTurns {
public:
  /// Collective over MPI_COMM_WORLD. `cores`: the cores this node's CPU
  /// ranks share (<= 0: the machine's online CPUs). Returns null on every
  /// rank of a node whose ranks each have a core of their own, or when
  /// `wanted` is false on any rank.
  static std::unique_ptr<CoreTurns> create(bool wanted, int cores);
  ~CoreTurns();
  CoreTurns(const CoreTurns &) = delete;
  CoreTurns &operator=(const CoreTurns &) = delete;

  /// Monotonic nanoseconds: the keys of waits.
  static int64_t now();

  /// Gives the core up before a wait that began at `key`. `collective`,
  /// when not 0, names the collective call being waited for (the same on
  /// every member): core-mates leaving it together then take the core in
  /// rank order even if a higher one notices first.
  void release(int64_t key, uint64_t collective = 0);
  /// Waits for the core after a wait that ended at `readyKey` (0: now).
  /// No-op when this rank holds it.
  void acquire(int64_t readyKey = 0);
  bool holds() const { return held; }
  /// Ends turns on this rank (the step loop is over): the core is given up
  /// for good and later calls do nothing.
  void stop();

  /// The node's doorbell: rung whenever one of its ranks sends or
  /// receives a message, so a rank sleeping in a wait on the node's ranks
  /// wakes at once (nap() returns when it was rung since `seen`, or after
  /// `ns`: messages from other nodes do not ring it).
  uint32_t bell() const;
  void ring();
  void nap(uint32_t seen, int64_t ns);

  int core() const { return myCore; }
  /// Whether this rank's core has no other rank (it need not sleep to
  /// let one run).
  bool alone() const { return myCore + cores >= localSize; }
  int coreCount() const { return cores; }
  int ranksOnNode() const { return localSize; }

private:
  CoreTurns() = default;
  bool best(int64_t key, uint64_t collective, bool ignorePending) const;

  struct Shared;
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  Shared *shm = nullptr;
  int localRank = 0, localSize = 1, cores = 1, myCore = 0;
  bool held = false, stopped = false;
  int64_t waitKey = 0;
  uint64_t waitCollective = 0;
};

} // namespace frenzy::rt

#endif
