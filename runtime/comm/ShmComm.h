//===- ShmComm.h - the Comm over one node's shared memory ------*- C++ -*-===//
//
// The transport for ranks that all run on one node: sums, max, broadcast
// and barrier go through a shared-memory window per group (NodeAllReduce:
// every member copies in, the last to arrive combines in member order,
// all copy out; one memory pass instead of MPI's rounds, and the same sum
// whatever the arrival order). Where core turns are on (CoreTurns.h) its
// waits give the core up as MpiComm's do.
//
// Point-to-point is delegated to the MPI world it is built on. Why not
// mailboxes of its own: on one node Open MPI already moves messages through
// shared memory (its "vader" transport: small messages through per-peer
// fast boxes, large ones in a single copy by cross-memory attach), where a
// mailbox in a window would cost a copy in and a copy out and need its own
// matching by tag and its own buffering; the sum is where MPI's rounds
// were slow, not the transfers.
//
// No MPI type appears here; the window lives in ShmComm.cpp and
// NodeAllReduce.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_COMM_SHMCOMM_H
#define FRENZY_RUNTIME_COMM_SHMCOMM_H

#include "Comm.h"

#include <map>
#include <memory>
#include <vector>

namespace frenzy::rt {

class MpiComm;
class NodeAllReduce;

class ShmComm final : public Comm {
public:
  /// Collective over `world`'s ranks, which must all run on this node
  /// (throws a RuntimeError otherwise). `world` must outlive this object;
  /// point-to-point messages and gathers go through it.
  explicit ShmComm(MpiComm &world);
  ~ShmComm() override;

  const char *name() const override { return "shm"; }
  int rank() const override;
  int size() const override;

  void send(const void *data, int64_t bytes, int peer, int tag) override;
  void recv(void *data, int64_t bytes, int peer, int tag) override;
  std::unique_ptr<Work> isend(const void *data, int64_t bytes, int peer,
                              int tag) override;
  std::unique_ptr<Work> irecv(void *data, int64_t bytes, int peer,
                              int tag) override;
  void probe(int peer, int tag) override;
  void probe(int peer, int tag, double napUntil) override;
  bool arrived(int peer, int tag) override;
  void waitSends() override;

  /// The same group in the MPI world (whose collectives need it too), and
  /// its window, made at the group's first collective.
  Group group(const std::vector<int32_t> &ranks, int tag) override;
  using Comm::allReduceMax;
  using Comm::allReduceSum;
  using Comm::barrier;
  void allReduceSum(float *data, int64_t n, Group g,
                    const Arrived &arrived = nullptr) override;
  void allReduceSum(double *data, int64_t n, Group g,
                    const Arrived &arrived = nullptr) override;
  void allReduceMax(int64_t *data, int64_t n, Group g) override;
  void broadcast(void *data, int64_t bytes, int root, Group g) override;
  void allGather(const float *mine, float *all, int64_t n, Group g) override;
  void reduceScatterSum(const float *all, float *mine, int64_t n,
                        Group g) override;
  void barrier(Group g) override;
  std::vector<int64_t> gather(int64_t value) override;
  std::vector<std::string> gatherBytes(const std::string &mine) override;

  bool startCoreTurns(bool wanted, int cores) override;
  void stopCoreTurns() override;
  void giveUpCore() override;
  void takeBackCore() override;

  [[noreturn]] void abort(int code) override;

private:
  /// The window of `g`, made collectively at its first use and sized by
  /// that call's bytes (at least 1 MiB a slot: later larger calls go in
  /// pieces); null for a group of one member.
  NodeAllReduce *window(Group g, int64_t bytes);
  /// The two allReduceSum.
  template <class T>
  void sum(T *data, int64_t n, Group g, const Arrived &arrived);
  /// The same number on every member for the same collective call (the
  /// turns' tie-break among core-mates leaving it together).
  uint64_t collectiveId(Group g);

  MpiComm &world;
  std::map<int, std::unique_ptr<NodeAllReduce>> windows; // by Group id
  std::vector<int> windowOrder; // made in this order: freed in reverse
  std::map<int, int> tags;      // the tag each group was made with
  std::map<int, uint64_t> calls;
};

} // namespace frenzy::rt

#endif
