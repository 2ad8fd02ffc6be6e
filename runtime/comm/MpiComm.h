//===- MpiComm.h - the Comm over MPI (and node shared memory) --*- C++ -*-===//
//
// One process per plan rank. Point-to-point transfers between pipeline
// stages are nonblocking sends of a private copy (a sender never waits for
// its receiver, so no schedule order can deadlock on buffer space) and
// blocking receives; sums over groups are MPI all-reduces, or sums in a
// shared-memory window for groups inside one node while core turns are on
// (NodeAllReduce.h). Messages over 1 GiB travel in pieces (MPI counts are
// int). The only place, with its helpers, that names MPI types.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_COMM_MPICOMM_H
#define FRENZY_RUNTIME_COMM_MPICOMM_H

#include <mpi.h>

#include "Comm.h"
#include "CoreTurns.h"
#include "NodeAllReduce.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt {

/// Whether this process was started by an MPI launcher (mpirun, srun).
bool launchedByMpi();

class MpiComm final : public Comm {
public:
  /// MPI_Init; the process's rank and the world size.
  MpiComm(int *argc, char ***argv);
  ~MpiComm() override;

  const char *name() const override { return "mpi"; }
  int rank() const override { return me; }
  int size() const override { return worldSize; }

  void send(const void *data, int64_t bytes, int peer, int tag) override;
  void recv(void *data, int64_t bytes, int peer, int tag) override;
  std::unique_ptr<Work> isend(const void *data, int64_t bytes, int peer,
                              int tag) override;
  std::unique_ptr<Work> irecv(void *data, int64_t bytes, int peer,
                              int tag) override;
  void probe(int peer, int tag) override;
  /// Asleep until `napUntil` (a test every 20 us), then inside MPI, whose
  /// wait spins. An emulated GPU's rank (--emulate-speed=plan) sleeps
  /// through most of a wait it expects to be long, as a waiting GPU leaves
  /// its host's CPU free: under SCHED_FIFO, ranks spinning on every core
  /// use up the kernel's real-time budget (sched_rt_runtime_us), which
  /// then stops them all for 50 ms about once a second. Spinning at the
  /// end keeps the message's pickup prompt.
  void probe(int peer, int tag, double napUntil) override;
  bool arrived(int peer, int tag) override;
  void waitSends() override;
  void progress() override;

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

  /// Core turns (CoreTurns.h) for ranks of this node beyond its cores.
  bool startCoreTurns(bool wanted, int cores) override;
  void stopCoreTurns() override;
  const CoreTurns *coreTurns() const { return turns.get(); }
  /// The turns in force (null when off or stopped), for ShmComm.
  CoreTurns *activeTurns() const { return active; }
  /// The MPI communicator of a group, for the shared-memory transport.
  MPI_Comm handle(Group g) const { return mpi(g); }
  void giveUpCore() override;
  void takeBackCore() override;

  [[noreturn]] void abort(int code) override;

private:
  int me = 0, worldSize = 1;
  double timeout = 0; // FRENZY_COMM_TIMEOUT seconds; 0: MPI waits as ever
  struct Pending {
    int peer = -1;
    std::vector<char> data;
    std::vector<MPI_Request> requests;
  };
  std::vector<Pending> pending;
  /// Buffers of completed sends, reused by the next ones: a fresh private
  /// copy per send paid its page faults every time (a 128 KiB activation:
  /// ~60 us on this VM, against ~3 us to copy it into a reused buffer).
  std::vector<std::vector<char>> spare;
  std::vector<MPI_Comm> groups; // by Group id; 0 is MPI_COMM_WORLD
  MPI_Comm mpi(Group g) const;

  // Core turns: null when this node's ranks each have a core.
  std::unique_ptr<CoreTurns> turns;
  CoreTurns *active = nullptr; // turns, until stopCoreTurns()
  std::map<MPI_Comm, int> groupTags;      // the tag each group was made with
  std::map<MPI_Comm, uint64_t> collCalls; // collectives called on each
  /// The same number on every member for the same collective call.
  uint64_t collectiveId(MPI_Comm c);
  /// Waits until every member of `c` has arrived, giving the core up if
  /// the others are not there yet.
  void arrive(MPI_Comm c);
  bool testSends();
  /// Gives the core up, waits until `done()` asleep, takes the core back;
  /// past the timeout throws `what`.
  template <class F> void waitWithoutCore(F done, const std::string &what);
  /// Polls `done()` until the timeout; then throws `what`.
  template <class F> void waitFor(F done, const std::string &what);
  int64_t deadline() const; // CoreTurns::now() ns; 0: none
  /// Waits for one request: against the timeout when there is one (a
  /// blocking MPI call whose peer's link went down mid-transfer would wait
  /// forever, in a receive's payload as in a collective), else MPI_Wait.
  /// Returns MPI's code. what() names the wait; it is called only when
  /// there is a timeout (no string is built per message otherwise).
  template <class W>
  int complete(MPI_Request &r, W what, MPI_Status *st = MPI_STATUS_IGNORE);
  [[noreturn]] void timedOut(const std::string &what) const;
  int stuckPeer = -1; // the peer of the first undelivered send
  std::string sendsStuck() const;
  std::map<MPI_Comm, std::string> groupRanks; // "[0,2]", for messages
  std::string groupName(MPI_Comm c) const;
  /// Sums `n` elements of `type` over `comm` (the two allReduceSum).
  template <class T>
  void sum(T *data, int64_t n, MPI_Datatype type, MPI_Comm comm,
           const Arrived &arrived);
  /// The shared-memory sum for `c` and elements of `elemBytes` (made at
  /// the first call, collectively; null where MPI's is used).
  NodeAllReduce *nodeSum(MPI_Comm c, int elemBytes, int64_t bytes);
  std::map<std::pair<MPI_Comm, int>, NodeAllReduce *> nodeSums;
  // Owned in the order made: freeing windows is collective, so every
  // member frees them in the same order.
  std::vector<std::unique_ptr<NodeAllReduce>> nodeSumsMade;
};

} // namespace frenzy::rt

#endif
