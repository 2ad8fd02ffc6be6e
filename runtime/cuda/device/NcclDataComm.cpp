//===- NcclDataComm.cpp - NcclComms behind the Comm interface -------------===//
//
// Compiles; not run on a GPU in the session that wrote it.
//
//===----------------------------------------------------------------------===//
#include "NcclDataComm.h"

#include "Tensor.h"

#include <cstdlib>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

/// Work already done when it is handed back (the stream orders it).
class DoneWork : public Work {
public:
  bool test() override { return true; }
  void wait() override {}
};

} // namespace

NcclDataComm::NcclDataComm(const plan::Plan &plan, DeviceContext &ctx,
                           Comm &host, double timeoutSeconds)
    : ctx(ctx), host(host), comms(plan, ctx, timeoutSeconds) {}

void NcclDataComm::send(const void *data, int64_t bytes, int peer, int tag) {
  comms.send(peer, data, bytes, tag, ctx.compute());
}

void NcclDataComm::recv(void *data, int64_t bytes, int peer, int tag) {
  comms.recv(peer, data, bytes, tag, ctx.compute());
}

std::unique_ptr<Work> NcclDataComm::isend(const void *data, int64_t bytes,
                                          int peer, int tag) {
  send(data, bytes, peer, tag);
  return std::make_unique<DoneWork>();
}

std::unique_ptr<Work> NcclDataComm::irecv(void *data, int64_t bytes, int peer,
                                          int tag) {
  recv(data, bytes, peer, tag);
  return std::make_unique<DoneWork>();
}

Group NcclDataComm::group(const std::vector<int32_t> &, int tag) {
  // NcclComms made every communicator of the plan up front; the group is
  // a name for the plan's group `tag`.
  Group g{int(planGroup.size()) + 1};
  planGroup[g.id] = tag;
  return g;
}

const CommSpec *NcclDataComm::spec(Group g) const {
  auto it = planGroup.find(g.id);
  if (it == planGroup.end())
    throw RuntimeError("rank " + std::to_string(rank()) +
                       ": NCCL: group " + std::to_string(g.id) +
                       " was not made by group()");
  return comms.forGroup(it->second);
}

void NcclDataComm::allReduceSum(float *data, int64_t n, Group g,
                                const Arrived &) {
  if (const CommSpec *c = spec(g))
    comms.allReduceSum(*c, data, n, ctx.compute());
}

void NcclDataComm::allReduceSum(double *data, int64_t n, Group g,
                                const Arrived &arrived) {
  if (g == Group::world()) // host scalars
    return host.allReduceSum(data, n, g, arrived);
  throw RuntimeError("rank " + std::to_string(rank()) +
                     ": NCCL sums device floats; doubles go to the host comm");
}

void NcclDataComm::allReduceMax(int64_t *data, int64_t n, Group g) {
  if (!(g == Group::world()))
    throw RuntimeError("rank " + std::to_string(rank()) +
                       ": NCCL: a max over a sub-group is not supported");
  host.allReduceMax(data, n, g);
}

void NcclDataComm::broadcast(void *data, int64_t bytes, int root, Group g) {
  if (const CommSpec *c = spec(g))
    comms.broadcast(*c, data, bytes, root, ctx.compute());
}

void NcclDataComm::barrier(Group g) {
  if (!(g == Group::world()))
    throw RuntimeError("rank " + std::to_string(rank()) +
                       ": NCCL: a barrier over a sub-group is not supported");
  host.barrier();
}

void NcclDataComm::abort(int code) {
  comms.abortAll();
  host.abort(code);
  std::abort(); // (host.abort does not return)
}
