//===- Comm.h - how ranks talk: one interface, several transports -*- C++ -*-===//
//
// The runtime's process group, in the manner of PyTorch c10d's
// ProcessGroup: the rank runner and the training loop are written against
// this class only, and each transport implements it (MpiComm over MPI, with
// shared-memory sums and core turns for ranks of one node; NcclComm over
// NCCL for device buffers). No MPI or NCCL type appears here, so a feature
// written once runs on every backend.
//
// Buffers live where memory() says: host memory for the MPI transport,
// device memory (ordered on the backend's compute stream) for NCCL.
// Sends are buffered: send() returns at once and the caller may reuse its
// buffer (a sender never waits for its receiver, so no schedule order can
// deadlock on buffer space); waitSends() waits until every send has left.
// Collectives are called by every member of the group, in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_COMM_COMM_H
#define FRENZY_RUNTIME_COMM_COMM_H

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt {

/// How long a transport waits for a peer before it throws a RuntimeError
/// naming the peer: FRENZY_COMM_TIMEOUT seconds; 0 (unset, or not a
/// positive number) waits forever, as MPI does: under mpirun a rank that
/// dies ends the job anyway, so the timeout is for a peer that is alive
/// but stopped, or a launcher that does not end the job.
inline double commTimeoutSeconds() {
  const char *v = std::getenv("FRENZY_COMM_TIMEOUT");
  double s = v ? std::strtod(v, nullptr) : 0;
  return s > 0 ? s : 0;
}

/// Where the buffers handed to a Comm live.
enum class MemorySpace { Host, Device };

/// A sub-group of the world, made by Comm::group (an index into the
/// transport's own table; id 0 is the whole world).
struct Group {
  int id = 0;
  static constexpr Group world() { return Group{0}; }
  bool operator==(const Group &o) const { return id == o.id; }
  bool operator<(const Group &o) const { return id < o.id; }
};

/// A non-blocking operation's completion handle.
class Work {
public:
  virtual ~Work() = default;
  /// Whether it has completed (returns at once).
  virtual bool test() = 0;
  /// Waits until it has completed; throws a RuntimeError naming the peer
  /// on a transport error.
  virtual void wait() = 0;
};

class Comm {
public:
  virtual ~Comm() = default;
  Comm() = default;
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;

  /// The transport's name ("mpi", "nccl"), for messages.
  virtual const char *name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual MemorySpace memory() const { return MemorySpace::Host; }

  // --- Point to point (tags order messages between one pair of ranks) ---
  /// Sends a copy of `bytes` bytes to `peer`; returns at once.
  virtual void send(const void *data, int64_t bytes, int peer, int tag) = 0;
  /// Receives exactly `bytes` bytes from `peer` (a different size throws).
  virtual void recv(void *data, int64_t bytes, int peer, int tag) = 0;
  /// Non-blocking forms: the buffer must stay valid until the handle's
  /// wait() returns.
  virtual std::unique_ptr<Work> isend(const void *data, int64_t bytes,
                                      int peer, int tag) = 0;
  virtual std::unique_ptr<Work> irecv(void *data, int64_t bytes, int peer,
                                      int tag) = 0;
  /// Waits until a message from `peer` with `tag` has arrived.
  virtual void probe(int peer, int tag) = 0;
  /// The same, asleep until steady-clock second `napUntil` where the
  /// transport can (an emulated device's rank leaves its CPU free).
  virtual void probe(int peer, int tag, double napUntil) {
    (void)napUntil;
    probe(peer, tag);
  }
  /// Whether a message from `peer` with `tag` has arrived (returns at once).
  virtual bool arrived(int peer, int tag) = 0;
  /// Waits until every send() has been delivered.
  virtual void waitSends() = 0;
  /// Lets sends in flight advance without waiting for them; cheap when
  /// none is (called between kernels). A transport whose sends complete
  /// by themselves (shared memory, NCCL's proxy thread) needs nothing.
  virtual void progress() {}

  // --- Groups and collectives ---
  /// A group of `ranks` (this process must be one of them; every member
  /// calls with the same ranks and tag, in the same order).
  virtual Group group(const std::vector<int32_t> &ranks, int tag) = 0;
  /// `arrived`, when given, is called once the wait for the other members
  /// is over, with how long ago it ended in seconds: a traced reduction's
  /// wait, then its transfer.
  using Arrived = std::function<void(double ago)>;
  virtual void allReduceSum(float *data, int64_t n, Group g,
                            const Arrived &arrived = nullptr) = 0;
  virtual void allReduceSum(double *data, int64_t n, Group g,
                            const Arrived &arrived = nullptr) = 0;
  virtual void allReduceMax(int64_t *data, int64_t n, Group g) = 0;
  /// `bytes` from group member `root` (an index into the group's ranks)
  /// to every member.
  virtual void broadcast(void *data, int64_t bytes, int root, Group g) = 0;
  /// Every member's `n` floats of `mine`, into `all` (n * members floats)
  /// in member order (sequence parallelism's all-gather).
  virtual void allGather(const float *mine, float *all, int64_t n,
                         Group g) = 0;
  /// The sum over members of `all` (n * members floats), of which member i
  /// keeps floats [i * n, (i + 1) * n) in `mine` (its reduce-scatter).
  virtual void reduceScatterSum(const float *all, float *mine, int64_t n,
                                Group g) = 0;
  virtual void barrier(Group g) = 0;
  /// Every rank's value, on rank 0 (others get an empty vector).
  virtual std::vector<int64_t> gather(int64_t value) = 0;
  /// Every rank's bytes, on rank 0 (others get an empty vector).
  virtual std::vector<std::string> gatherBytes(const std::string &mine) = 0;

  // Shorthands over the whole world.
  void allReduceSum(double *data, int64_t n) {
    allReduceSum(data, n, Group::world());
  }
  void allReduceMax(int64_t *data, int64_t n) {
    allReduceMax(data, n, Group::world());
  }
  void barrier() { barrier(Group::world()); }

  // --- CPU ranks that share cores (a no-op elsewhere) ---
  /// Ranks of this node that share cores take turns on them from here on:
  /// collective; `cores` <= 0 means the machine's online CPUs. Returns
  /// whether turns are on.
  virtual bool startCoreTurns(bool wanted, int cores) {
    (void)wanted, (void)cores;
    return false;
  }
  /// Turns end (the step loop is over; every rank calls it).
  virtual void stopCoreTurns() {}
  /// Around blocking work done outside this class while turns are on.
  virtual void giveUpCore() {}
  virtual void takeBackCore() {}

  /// Ends every rank of the job (after a rank's error).
  [[noreturn]] virtual void abort(int code) = 0;
};

} // namespace frenzy::rt

#endif
