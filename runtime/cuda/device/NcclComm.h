//===- NcclComm.h - the Comm over NCCL, for device buffers -----*- C++ -*-===//
//
// The CUDA backend's transport (memory() == Device). For the shared rank
// runner's author:
//
//   NcclComm comm(plan, ctx, hostComm, cudaTimeoutSeconds());
//
// is collective over every rank of the plan. `ctx` is the rank's
// DeviceContext (device, compute stream, events); `hostComm` is the host
// transport (MpiComm, or ShmComm on one node) the process already has: it
// carries the bootstrap (every rank's physical GPU, the ncclUniqueIds; no
// raw MPI call here), the shared-GPU fallback and every host buffer.
// Both must outlive this object.
//
// Communicators: one per TP/DP/TIED group of the plan and one per directed
// pipeline edge (host/CommPlan), all made in the constructor. group(ranks,
// tag) returns the plan group of those ranks (and makes the matching host
// group: barrier, host buffers, the fallback); for a group the plan does
// not have it makes a communicator then (collective over its members;
// the host fallback where two members share a GPU).
//
// Order on the GPU (the streams are host/StreamOrder's, by name):
//  - send(): the "send:P" stream waits for an event recorded on the compute
//    stream now (after the producer), copies the buffer on "stage:P" into
//    a private device block (so the caller may overwrite its buffer at
//    once: the compute stream waits only for that copy, not for the
//    receiver) and sends it. No send waits for compute that comes later,
//    so a 1F1B pipeline cannot deadlock on NCCL's buffers.
//  - recv(): the "recv:P" stream waits for the compute stream only when the
//    tag is a shared tensor (`sharedTag`: it may still be read; a fresh
//    per-micro-batch buffer waits for nothing), receives, and the compute
//    stream waits for the receive's event (the consumer comes later).
//  - isend()/irecv(): the same without the copy and without the compute
//    stream's wait: Work::wait() makes the compute stream wait for the
//    transfer (as c10d's ProcessGroupNCCL does; the host does not block),
//    so the runner calls it right before the first compute action that
//    StreamOrder lists as waiting for that transfer; Work::test() says
//    whether it has completed.
//  - collectives run on the compute stream (their consumers are the next
//    compute actions); with a host buffer they go through the host Comm.
// Tags order nothing in NCCL (one edge's messages arrive in the order
// sent); they matter in the fallback. NCCL cannot see a message's size, so
// a size mismatch is not detected, and cannot probe: probe() returns at
// once (the receive itself is stream-ordered) and arrived() says "not yet",
// so the runner's side-task slots in front of a receive are bounded by
// their time alone (saying "there" would end every slot at once).
//
// Ranks sharing one GPU: NCCL refuses a communicator with the same GPU
// twice, so CommPlan gives those communicators the fallback: the device
// buffer is staged through host memory (after the compute stream's work)
// and moved by the host Comm (slower, same values; tests with
// --share-gpus).
//
// Errors and timeouts: an NCCL error, or a wait past `timeoutSeconds`
// (waitSends, synchronize, Work::wait's host side, communicator set-up)
// aborts every communicator (ncclCommAbort cancels GPU work waiting for a
// dead peer) and throws one line naming this rank and the peer or the
// communicator; the caller then ends the job (abort()).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_NCCLCOMM_H
#define FRENZY_RUNTIME_CUDA_DEVICE_NCCLCOMM_H

#include "Comm.h"
#include "CommPlan.h"
#include "DeviceContext.h"

#include <nccl.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace frenzy::rt::cuda {

class NcclComm final : public Comm {
public:
  /// `sharedTag(tag)`: whether the tensor of that tag is one buffer for
  /// every micro-batch (a parameter, a gradient); null: every receive
  /// waits for the compute stream (always safe, less overlap).
  NcclComm(const plan::Plan &plan, DeviceContext &ctx, Comm &host,
           double timeoutSeconds,
           std::function<bool(int tag)> sharedTag = nullptr);
  ~NcclComm() override;

  const char *name() const override { return "nccl"; }
  int rank() const override { return me; }
  int size() const override { return host.size(); }
  MemorySpace memory() const override { return MemorySpace::Device; }

  void send(const void *data, int64_t bytes, int peer, int tag) override;
  void recv(void *data, int64_t bytes, int peer, int tag) override;
  std::unique_ptr<Work> isend(const void *data, int64_t bytes, int peer,
                              int tag) override;
  std::unique_ptr<Work> irecv(void *data, int64_t bytes, int peer,
                              int tag) override;
  void probe(int peer, int tag) override {}
  bool arrived(int peer, int tag) override { return false; }
  /// Waits (on the host) until every send has been delivered.
  void waitSends() override;

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
  /// Device buffers through ncclAllGather / ncclReduceScatter on the
  /// compute stream; host buffers (or a group without NCCL) through the
  /// host transport.
  void allGather(const float *mine, float *all, int64_t n, Group g) override;
  void reduceScatterSum(const float *all, float *mine, int64_t n,
                        Group g) override;
  /// A host barrier over the group's members.
  void barrier(Group g) override;
  /// Host values, through the host Comm.
  std::vector<int64_t> gather(int64_t value) override;
  std::vector<std::string> gatherBytes(const std::string &mine) override;

  /// Waits for every stream this transport used and the compute stream,
  /// checking the communicators for errors (use it instead of
  /// DeviceContext::synchronize at the end of a step: a dead peer then
  /// gives an abort and one line, not a stuck stream).
  void synchronize(const std::string &during);
  /// The specs of the communicators this rank is a member of.
  std::vector<CommSpec> specs() const;

  /// Aborts every communicator, then ends the job through the host Comm.
  [[noreturn]] void abort(int code) override;

  /// Work on a stream: done when its event is (friend of the transport for
  /// its error checks).
  class StreamWork;
  class StagedRecv;

private:
  struct Entry {
    CommSpec spec;
    ncclComm_t nccl = nullptr; // null: the fallback
  };
  Entry &p2p(int from, int to);
  /// The group's communicator; null: through the host Comm.
  Entry *entryOf(Group g);
  /// Polls a non-blocking NCCL call's communicator until it has left
  /// ncclInProgress; throws (after abortAll) on error or the deadline.
  void settle(Entry &e, ncclResult_t r, const std::string &what);
  /// Waits on the host for `event`, checking `e`'s errors; `what` names
  /// the transfer in a timeout's message.
  void waitEvent(uint64_t event, Entry *e, const std::string &what);
  void abortAll();
  [[noreturn]] void fail(const std::string &msg);
  bool onDevice(const void *p) const;
  cudaStream_t stream(const std::string &kind, int peer);
  template <class T>
  void reduce(T *data, int64_t n, Group g, ncclDataType_t type, ncclRedOp_t op,
              const Arrived &arrived);
  /// The fallback's staging: device -> host (after the compute stream's
  /// work), `move` on the host, host -> device.
  void staged(void *data, int64_t bytes, bool in, bool out,
              const std::function<void(void *)> &move);

  DeviceContext &ctx;
  Comm &host;
  double timeout;
  std::function<bool(int)> sharedTag;
  int me = 0;
  // This rank's, in the plan's order, then those group() made (a deque:
  // pending sends and Work handles point into it).
  std::deque<Entry> entries;
  std::vector<std::string> gpuOf; // every rank's physical GPU
  std::vector<int> groupEntry;    // by Group id: index into entries, -1: world
  std::vector<Group> hostGroups;  // by Group id: the host Comm's group
  std::vector<std::vector<int32_t>> groupRanks; // by Group id
  struct PendingSend {
    uint64_t event;
    int peer;
    Entry *entry;
  };
  std::vector<PendingSend> pendingSends;
  std::vector<cudaStream_t> used; // streams to synchronize
  cudaMemPool_t copies = nullptr; // send()'s private copies
};

} // namespace frenzy::rt::cuda

#endif
