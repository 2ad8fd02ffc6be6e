//===- NodeAllReduce.h - sums among ranks that share a node's cores -*- C++ -*-===//
//
// An all-reduce for a group whose members all run on one node and take
// turns on its cores (CoreTurns.h): each member copies its buffer into its
// slot of a shared-memory window and sleeps; the last to arrive sums the
// slots in member order into a result slot and wakes the others, who copy
// the sum out once they have their core again.
//
// Why not MPI_Allreduce there: its rounds each need every member to be
// scheduled, so with three ranks per core a 0.5 MiB sum took ~1.1 ms of
// turns and wake-ups (the README plan's DP phase), against ~0.15 ms for one
// pass over the members' data. The cost is now three memory passes the
// predicted timeline plays directly (copy in, sum, copy out), and the sum
// is the same whatever the order the members arrived in.
//
// Buffers larger than a slot (16 MiB) go through it in pieces.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_NODEALLREDUCE_H
#define FRENZY_RUNTIME_DIST_NODEALLREDUCE_H

#include "CoreTurns.h"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace frenzy::rt {

class NodeAllReduce {
public:
  static constexpr int64_t kSlotBytes = int64_t(16) << 20;

  /// Collective over `comm`; null when its members are not all on this
  /// node. `bytes`: the first call's buffer (slots are no larger).
  static std::unique_ptr<NodeAllReduce> create(MPI_Comm comm, int64_t bytes);
  ~NodeAllReduce();
  NodeAllReduce(const NodeAllReduce &) = delete;
  NodeAllReduce &operator=(const NodeAllReduce &) = delete;

  /// Sums `n` elements over the members, in place. The core is given up
  /// while waiting for the others (`turns`, with `collective` naming this
  /// call) and taken back before the copy out; `arrived` is called once
  /// every member has arrived (the end of the traced wait).
  void sum(float *data, int64_t n, CoreTurns &turns, uint64_t collective,
           const std::function<void(double)> &arrived);
  void sum(double *data, int64_t n, CoreTurns &turns, uint64_t collective,
           const std::function<void(double)> &arrived);

private:
  NodeAllReduce() = default;
  template <class T>
  void sumPieces(T *data, int64_t n, CoreTurns &turns, uint64_t collective,
                 const std::function<void(double)> &arrived);

  struct Header;
  MPI_Win win = MPI_WIN_NULL;
  Header *header = nullptr;
  char *slots = nullptr; // members input slots, then two result slots
  int64_t slotBytes = 0;
  int me = 0, members = 1;
  uint32_t calls = 0; // pieces summed so far (the same on every member)
};

} // namespace frenzy::rt

#endif
