//===- NodeAllReduce.h - collectives through a node's shared memory -*- C++ -*-===//
//
// Collectives for a group whose members all run on one node, through an
// MPI-3 shared-memory window: each member copies its buffer into its slot
// of the window and waits; the last to arrive combines the slots in member
// order into a result slot and wakes the others, who copy the result out.
// Sums (float, double), max (int64), broadcast (the root's bytes through
// the result slot) and barrier are all that one round.
//
// Two users: MpiComm while core turns are on (CoreTurns.h: a waiting member
// gives its core up and takes it back before the copy out), and ShmComm,
// the shared-memory transport, without turns (a waiting member spins
// briefly, then sleeps on a futex).
//
// Why not MPI_Allreduce there: its rounds each need every member to be
// scheduled, so with three ranks per core a 0.5 MiB sum took ~1.1 ms of
// turns and wake-ups (the README plan's DP phase), against ~0.15 ms for one
// pass over the members' data. The cost is three memory passes the
// predicted timeline plays directly (copy in, sum, copy out), and the sum
// is the same whatever the order the members arrived in.
//
// Buffers larger than a slot (16 MiB at most) go through it in pieces.
// A member that does not arrive within FRENZY_COMM_TIMEOUT (Comm.h) makes
// the waiters throw a line naming it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_NODEALLREDUCE_H
#define FRENZY_RUNTIME_DIST_NODEALLREDUCE_H

#include "CoreTurns.h"

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt {

class NodeAllReduce {
public:
  static constexpr int64_t kSlotBytes = int64_t(16) << 20;

  /// Whether every member of `comm` runs on this node (collective).
  static bool allOnNode(MPI_Comm comm);
  /// Collective over `comm`; null when its members are not all on this
  /// node. `bytes`: the first call's buffer (slots are no larger).
  static std::unique_ptr<NodeAllReduce> create(MPI_Comm comm, int64_t bytes);
  ~NodeAllReduce();
  NodeAllReduce(const NodeAllReduce &) = delete;
  NodeAllReduce &operator=(const NodeAllReduce &) = delete;

  /// Sums `n` elements over the members, in place. With `turns` the core
  /// is given up while waiting for the others (`collective` naming this
  /// call) and taken back before the copy out; `arrived` is called once
  /// every member has arrived (the end of the traced wait).
  void sum(float *data, int64_t n, CoreTurns *turns, uint64_t collective,
           const std::function<void(double)> &arrived);
  void sum(double *data, int64_t n, CoreTurns *turns, uint64_t collective,
           const std::function<void(double)> &arrived);
  void max(int64_t *data, int64_t n, CoreTurns *turns, uint64_t collective);
  /// `bytes` from member `root` to every member.
  void broadcast(void *data, int64_t bytes, int root, CoreTurns *turns,
                 uint64_t collective);
  void barrier(CoreTurns *turns, uint64_t collective);
  /// The members, and this process's index among them (the order of the
  /// group's ranks).
  int memberCount() const { return members; }
  int memberIndex() const { return me; }

private:
  NodeAllReduce() = default;
  template <class T, class Op>
  void reduce(T *data, int64_t n, CoreTurns *turns, uint64_t collective,
              const std::function<void(double)> &arrived, Op op);
  /// One round: `in(mySlot, result)` before arriving, `combine(result)` by
  /// the last to arrive, `out(result)` by every member once all arrived.
  template <class In, class Combine, class Out>
  void round(CoreTurns *turns, uint64_t collective,
             const std::function<void(double)> *arrived, In in,
             Combine combine, Out out);
  /// Waits until the round `calls` is over; throws naming the members
  /// that have not arrived once the timeout has passed.
  void waitForRound(bool spin);
  std::atomic<uint32_t> *seen() const;

  struct Header;
  MPI_Win win = MPI_WIN_NULL;
  Header *header = nullptr;
  char *slots = nullptr; // members input slots, then two result slots
  int64_t slotBytes = 0;
  int me = 0, members = 1;
  std::vector<int> worldRanks; // of the members, for messages
  double timeout = 0;          // seconds; 0: none
  uint32_t calls = 0; // rounds so far (the same on every member)
};

} // namespace frenzy::rt

#endif
