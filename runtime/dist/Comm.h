//===- Comm.h - the MPI the runtime uses ------------------------*- C++ -*-===//
//
// One process per plan rank. Point-to-point transfers between pipeline
// stages are nonblocking sends of a private copy (a sender never waits for
// its receiver, so no schedule order can deadlock on buffer space) and
// blocking receives; sums over groups are MPI all-reduces. Messages over
// 1 GiB travel in pieces (MPI counts are int).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_COMM_H
#define FRENZY_RUNTIME_DIST_COMM_H

#include <mpi.h>

#include "CoreTurns.h"
#include "NodeAllReduce.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt {

class Comm {
public:
  /// MPI_Init; the process's rank and the world size.
  Comm(int *argc, char ***argv);
  ~Comm();
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;

  /// Whether this process was started by an MPI launcher (mpirun, srun).
  static bool launchedByMpi();

  int rank() const { return me; }
  int size() const { return worldSize; }

  /// Sends a copy of `bytes` bytes to `peer`; returns at once.
  void send(const void *data, int64_t bytes, int peer, int tag);
  /// Receives exactly `bytes` bytes from `peer`.
  void recv(void *data, int64_t bytes, int peer, int tag);
  /// Waits until a message from `peer` with `tag` has arrived (a traced
  /// receive: the wait before the copy).
  void probe(int peer, int tag);
  /// The same, asleep until steady-clock second `napUntil` (a test every
  /// 20 us), then inside MPI, whose wait spins. An emulated GPU's rank
  /// (--emulate-speed=plan) sleeps through most of a wait it expects to be
  /// long, as a waiting GPU leaves its host's CPU free: under SCHED_FIFO,
  /// ranks spinning on every core use up the kernel's real-time budget
  /// (sched_rt_runtime_us), which then stops them all for 50 ms about once
  /// a second. Spinning at the end keeps the message's pickup prompt.
  void probe(int peer, int tag, double napUntil);
  /// Whether a message from `peer` with `tag` has arrived (returns at once).
  bool arrived(int peer, int tag);
  /// Waits until every send has been delivered to MPI.
  void waitSends();

  /// A communicator over `ranks` (this process must be one of them; every
  /// member calls with the same ranks and tag, in the same order).
  MPI_Comm group(const std::vector<int32_t> &ranks, int tag);
  /// `arrived`, when given, is called once the wait for the other members
  /// is over, with how long ago it ended in seconds (a member woken late
  /// was waiting for its core, not for them): a traced reduction's wait,
  /// then its transfer.
  using Arrived = std::function<void(double ago)>;
  void allReduceSum(float *data, int64_t n, MPI_Comm comm,
                    const Arrived &arrived = nullptr);
  void allReduceSum(double *data, int n, const Arrived &arrived = nullptr);
  void allReduceMax(int64_t *data, int n);
  /// Every rank's value, on rank 0 (others get an empty vector).
  std::vector<int64_t> gather(int64_t value);
  void barrier();
  void barrier(MPI_Comm comm);

  /// Ranks of this node that share cores take turns on them from here on
  /// (CoreTurns.h): collective; `cores` <= 0 means the machine's online
  /// CPUs. Returns whether turns are on.
  bool startCoreTurns(bool wanted, int cores);
  /// Turns end (the step loop is over; every rank calls it).
  void stopCoreTurns();
  const CoreTurns *coreTurns() const { return turns.get(); }
  /// For MPI calls made outside this class while turns are on: gives the
  /// core up before (`giveUp`) and waits for it after (`takeBack`).
  void giveUpCore();
  void takeBackCore();

  /// Ends every rank of the job (after a rank's error).
  [[noreturn]] void abort(int code);

private:
  int me = 0, worldSize = 1;
  struct Pending {
    std::vector<char> data;
    std::vector<MPI_Request> requests;
  };
  std::vector<Pending> pending;
  /// Buffers of completed sends, reused by the next ones: a fresh private
  /// copy per send paid its page faults every time (a 128 KiB activation:
  /// ~60 us on this VM, against ~3 us to copy it into a reused buffer).
  std::vector<std::vector<char>> spare;
  std::vector<MPI_Comm> groups;

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
  /// Gives the core up, waits until `done()` asleep, takes the core back.
  template <class F> void waitWithoutCore(F done);
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
