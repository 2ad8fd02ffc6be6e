//===- NcclComms.h - the NCCL communicators of a CUDA rank ------*- C++ -*-===//
//
// Creates this rank's communicators from host/CommPlan's list: for each
// NCCL communicator the first member makes an ncclUniqueId and sends it to
// the others over MPI (every rank walks the same list in the same order,
// so the sends and receives match); all inits run non-blocking inside one
// NCCL group and are polled against a deadline. Communicators where two
// members share a GPU (or one runs on the CPU) use the MPI fallback:
// stage through host memory, the CPU backend's MPI calls, copy back.
//
// Any NCCL error or a deadline passed aborts every communicator
// (ncclCommAbort: the GPU work waiting on a dead peer is cancelled) and
// throws one line naming the rank and the communicator; frenzy-launch then
// ends the job with MPI_Abort.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_NCCLCOMMS_H
#define FRENZY_RUNTIME_CUDA_DEVICE_NCCLCOMMS_H

#include "CommPlan.h"
#include "DeviceContext.h"

#include <mpi.h>
#include <nccl.h>

#include <vector>

namespace frenzy::rt::cuda {

class NcclComms {
public:
  /// Collective over MPI_COMM_WORLD: every rank of the plan calls it.
  NcclComms(const plan::Plan &plan, DeviceContext &ctx, double timeoutSeconds);
  ~NcclComms();
  NcclComms(const NcclComms &) = delete;
  NcclComms &operator=(const NcclComms &) = delete;

  /// The specs this rank is a member of, in the plan's order.
  const std::vector<CommSpec> &all() const { return specs; }
  /// The DP/TP/TIED communicator of Plan.groups[group]; null when this
  /// rank is not in it (or it has one rank).
  const CommSpec *forGroup(int group) const;

  /// In-place sum of n floats over the communicator, on `s`.
  void allReduceSum(const CommSpec &c, float *data, int64_t n, cudaStream_t s);
  /// `bytes` from the communicator's ranks[root] to every member.
  void broadcast(const CommSpec &c, void *data, int64_t bytes, int root,
                 cudaStream_t s);
  /// Pipeline transfers over the P2P communicator of (this rank, peer);
  /// `tag` orders MPI-fallback messages as the CPU backend does.
  void send(int peer, const void *data, int64_t bytes, int tag, cudaStream_t s);
  void recv(int peer, void *data, int64_t bytes, int tag, cudaStream_t s);

  /// Waits until the MPI-fallback sends have been delivered to MPI.
  void waitSends();
  /// Ends every communicator without waiting for peers.
  void abortAll();

private:
  struct Entry {
    CommSpec spec;
    ncclComm_t nccl = nullptr;
    MPI_Comm mpi = MPI_COMM_NULL; // the fallback (groups; P2P uses WORLD)
  };
  Entry &entry(const CommSpec &c);
  Entry &p2p(int from, int to);
  /// Polls a non-blocking NCCL call's communicator until it left
  /// ncclInProgress; throws (after abortAll) on error or the deadline.
  void settle(Entry &e, ncclResult_t r, const char *what);
  [[noreturn]] void fail(const std::string &msg);

  DeviceContext &ctx;
  double timeout;
  std::vector<Entry> entries;
  std::vector<CommSpec> specs;
  std::vector<std::pair<std::vector<char>, std::vector<MPI_Request>>>
      pendingSends; // MPI-fallback sends: the host copy and its requests
};

} // namespace frenzy::rt::cuda

#endif
