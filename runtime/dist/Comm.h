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

#include <cstdint>
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
  void allReduceSum(float *data, int64_t n, MPI_Comm comm);
  void allReduceSum(double *data, int n);
  void allReduceMax(int64_t *data, int n);
  /// Every rank's value, on rank 0 (others get an empty vector).
  std::vector<int64_t> gather(int64_t value);
  void barrier();
  void barrier(MPI_Comm comm);

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
};

} // namespace frenzy::rt

#endif
