//===- NcclComm.cpp - the Comm over NCCL, for device buffers --------------===//
#include "NcclComm.h"

#include "CudaCheck.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <type_traits>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

constexpr int kIdTag = 0x6e63; // ncclUniqueId messages (before any tensor)

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

/// Every rank's physical GPU (what decides NCCL or the fallback), through
/// the host Comm: gathered on rank 0, then broadcast.
std::vector<std::string> allGpuIds(Comm &host, const std::string &mine) {
  std::vector<std::string> got = host.gatherBytes(mine);
  std::string packed;
  for (const std::string &s : got)
    packed += s + '\n';
  int64_t len = int64_t(packed.size());
  host.broadcast(&len, 8, 0, Group::world());
  packed.resize(size_t(len));
  host.broadcast(packed.data(), len, 0, Group::world());
  std::vector<std::string> out;
  size_t at = 0;
  for (int r = 0; r < host.size(); ++r) {
    size_t nl = packed.find('\n', at);
    out.push_back(packed.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

ncclDataType_t ncclType(float *) { return ncclFloat; }
ncclDataType_t ncclType(double *) { return ncclDouble; }
ncclDataType_t ncclType(int64_t *) { return ncclInt64; }

} // namespace

/// A transfer on its stream: complete when its event is.
class NcclComm::StreamWork final : public Work {
public:
  StreamWork(NcclComm &c, uint64_t event, Entry *e, std::string what)
      : c(c), event(event), e(e), what(std::move(what)) {}
  bool test() override {
    if (c.ctx.done(event))
      return true;
    ncclResult_t s = ncclSuccess;
    if (e && e->nccl)
      ncclCommGetAsyncError(e->nccl, &s);
    if (s != ncclSuccess && s != ncclInProgress)
      c.fail(c.ctx.who() + ": " + what + " on " + e->spec.name() + ": " +
             ncclGetErrorString(s) + " (a peer may have died)");
    return false;
  }
  /// The compute stream waits for the transfer (the host does not).
  void wait() override { c.ctx.wait(c.ctx.compute(), event); }

private:
  NcclComm &c;
  uint64_t event;
  Entry *e;
  std::string what;
};

/// The fallback's receive: into host memory through the host Comm (not
/// blocking), copied to the device once waited for.
class NcclComm::StagedRecv final : public Work {
public:
  StagedRecv(NcclComm &c, void *data, int64_t bytes, int peer, int tag)
      : c(c), data(data), h(static_cast<size_t>(bytes)) {
    w = c.host.irecv(h.data(), bytes, peer, tag);
  }
  bool test() override { return copied || w->test(); }
  void wait() override {
    if (copied)
      return;
    w->wait();
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(data, h.data(), h.size(),
                                      cudaMemcpyHostToDevice, c.ctx.compute()),
                      c.ctx.who());
    // The host buffer must outlive the copy.
    c.ctx.synchronize(c.ctx.compute(), c.timeout, "a staged receive");
    copied = true;
  }

private:
  NcclComm &c;
  void *data;
  std::vector<char> h;
  std::unique_ptr<Work> w;
  bool copied = false;
};

NcclComm::NcclComm(const plan::Plan &plan, DeviceContext &ctx, Comm &host,
                   double timeoutSeconds, std::function<bool(int)> sharedTag)
    : ctx(ctx), host(host), timeout(timeoutSeconds),
      sharedTag(std::move(sharedTag)), me(host.rank()) {
  gpuOf = allGpuIds(host, ctx.physicalId());
  std::vector<CommSpec> all = planCommunicators(plan, gpuOf);
  // Ids first (host messages, matched by order: every rank walks the same
  // list), then every NCCL init in one group so that no init waits for
  // another.
  std::vector<ncclUniqueId> ids;
  for (const CommSpec &c : all) {
    int idx = c.indexOf(me);
    if (idx < 0)
      continue;
    entries.push_back({c, nullptr});
    ids.emplace_back();
    if (c.transport != Transport::Nccl)
      continue;
    if (idx == 0) {
      FRENZY_NCCL_CHECK(ncclGetUniqueId(&ids.back()), ctx.who());
      for (size_t k = 1; k < c.ranks.size(); ++k)
        host.send(&ids.back(), sizeof(ncclUniqueId), c.ranks[k], kIdTag);
    } else {
      host.recv(&ids.back(), sizeof(ncclUniqueId), c.ranks[0], kIdTag);
    }
  }
  host.waitSends();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0; // returns at once; settle() polls with a deadline
  FRENZY_NCCL_CHECK(ncclGroupStart(), ctx.who());
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry &e = entries[i];
    if (e.spec.transport != Transport::Nccl)
      continue;
    ncclResult_t r = ncclCommInitRankConfig(
        &e.nccl, int(e.spec.ranks.size()), ids[i], e.spec.indexOf(me), &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      ncclGroupEnd();
      fail(ctx.who() + ": NCCL init of " + e.spec.name() + ": " +
           ncclGetErrorString(r));
    }
  }
  ncclResult_t r = ncclGroupEnd();
  for (Entry &e : entries)
    if (e.nccl)
      settle(e, r, "init");
  groupEntry.push_back(-1); // Group 0: the world, through the host
  hostGroups.push_back(Group::world());
  groupRanks.emplace_back();
  for (int r = 0; r < host.size(); ++r)
    groupRanks.back().push_back(r);
}

NcclComm::~NcclComm() {
  try {
    waitSends();
  } catch (const std::exception &) {
    // Already aborted; the destructor must not throw.
  }
  for (Entry &e : entries) {
    if (!e.nccl)
      continue;
    // Finalize flushes outstanding work; on any trouble just abort.
    ncclResult_t r = ncclCommFinalize(e.nccl);
    if (r == ncclSuccess || r == ncclInProgress) {
      ncclResult_t s = ncclInProgress;
      auto t0 = std::chrono::steady_clock::now();
      while (s == ncclInProgress && secondsSince(t0) < timeout)
        ncclCommGetAsyncError(e.nccl, &s);
      if (s == ncclSuccess) {
        ncclCommDestroy(e.nccl);
        continue;
      }
    }
    ncclCommAbort(e.nccl);
  }
  if (copies) {
    cudaDeviceSynchronize(); // the pool's blocks are freed on the streams
    cudaMemPoolDestroy(copies);
  }
}

void NcclComm::abortAll() {
  for (Entry &e : entries)
    if (e.nccl) {
      ncclCommAbort(e.nccl);
      e.nccl = nullptr;
    }
}

void NcclComm::fail(const std::string &msg) {
  abortAll();
  throw RuntimeError(msg);
}

void NcclComm::abort(int code) {
  abortAll();
  host.abort(code);
  std::_Exit(code); // host.abort does not return; the compiler cannot see it
}

void NcclComm::settle(Entry &e, ncclResult_t r, const std::string &what) {
  if (r != ncclSuccess && r != ncclInProgress)
    fail(ctx.who() + ": NCCL " + what + " on " + e.spec.name() + ": " +
         ncclGetErrorString(r) + " (" + ncclGetLastError(e.nccl) + ")");
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    ncclResult_t s = ncclSuccess;
    ncclCommGetAsyncError(e.nccl, &s);
    if (s == ncclSuccess)
      return;
    if (s != ncclInProgress)
      fail(ctx.who() + ": NCCL " + what + " on " + e.spec.name() + ": " +
           ncclGetErrorString(s) + " (" + ncclGetLastError(e.nccl) +
           "; a peer may have died)");
    if (secondsSince(t0) > timeout)
      fail(ctx.who() + ": NCCL " + what + " on " + e.spec.name() +
           " did not complete within " + std::to_string(int(timeout)) +
           " s (a peer rank died or stopped)");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void NcclComm::waitEvent(uint64_t event, Entry *e, const std::string &what) {
  auto t0 = std::chrono::steady_clock::now();
  for (int spin = 0; !ctx.done(event); ++spin) {
    if (e && e->nccl) {
      ncclResult_t s = ncclSuccess;
      ncclCommGetAsyncError(e->nccl, &s);
      if (s != ncclSuccess && s != ncclInProgress)
        fail(ctx.who() + ": " + what + " on " + e->spec.name() + ": " +
             ncclGetErrorString(s) + " (a peer may have died)");
    }
    if (secondsSince(t0) > timeout)
      fail(ctx.who() + ": " + what +
           (e ? " on " + e->spec.name() : std::string()) +
           " did not complete within " + std::to_string(int(timeout)) +
           " s (a peer rank died or stopped)");
    if (spin > 100)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

bool NcclComm::onDevice(const void *p) const {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

cudaStream_t NcclComm::stream(const std::string &kind, int peer) {
  cudaStream_t s = ctx.stream(kind + ":" + std::to_string(peer));
  if (std::find(used.begin(), used.end(), s) == used.end())
    used.push_back(s);
  return s;
}

NcclComm::Entry &NcclComm::p2p(int from, int to) {
  for (Entry &e : entries)
    if (e.spec.kind == CommSpec::P2P && e.spec.ranks[0] == from &&
        e.spec.ranks[1] == to)
      return e;
  throw RuntimeError(ctx.who() + ": the plan has no transfer from rank " +
                     std::to_string(from) + " to rank " + std::to_string(to) +
                     "; re-emit the plan with frenzy-opt");
}

NcclComm::Entry *NcclComm::entryOf(Group g) {
  if (g.id < 0 || size_t(g.id) >= groupEntry.size())
    throw RuntimeError(ctx.who() + ": no communicator " + std::to_string(g.id) +
                       " (not a member of that group)");
  int i = groupEntry[size_t(g.id)];
  return i < 0 ? nullptr : &entries[size_t(i)];
}

// --- Point to point ------------------------------------------------------

void NcclComm::send(const void *data, int64_t bytes, int peer, int tag) {
  if (!onDevice(data))
    return host.send(data, bytes, peer, tag);
  Entry &e = p2p(me, peer);
  if (!e.nccl)
    return staged(const_cast<void *>(data), bytes, true, false,
                  [&](void *h) { host.send(h, bytes, peer, tag); });
  // The copy on a stream of its own: a send still waiting for its receiver
  // on "send:P" must not hold up the compute stream's wait for the copy.
  cudaStream_t copyS = stream("stage", peer), sendS = stream("send", peer);
  ctx.wait(copyS, ctx.record(ctx.compute())); // after the producer
  if (!copies) {
    // A pool of its own that never makes an allocation wait for a free on
    // another stream: CUDA's default may reuse a block freed on "send:P"
    // by making "stage:P" wait for that send, i.e. for the receiver,
    // which is the coupling the stage stream is there to avoid.
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ctx.device();
    FRENZY_CUDA_CHECK(cudaMemPoolCreate(&copies, &props), ctx.who());
    int no = 0;
    FRENZY_CUDA_CHECK(
        cudaMemPoolSetAttribute(copies,
                                cudaMemPoolReuseAllowInternalDependencies, &no),
        ctx.who());
    uint64_t keep = ~uint64_t(0); // blocks stay in the pool between steps
    FRENZY_CUDA_CHECK(
        cudaMemPoolSetAttribute(copies, cudaMemPoolAttrReleaseThreshold, &keep),
        ctx.who());
  }
  void *copy = nullptr;
  FRENZY_CUDA_CHECK(cudaMallocFromPoolAsync(&copy,
                                            size_t(std::max<int64_t>(bytes, 1)),
                                            copies, copyS),
                    ctx.who());
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(copy, data, size_t(bytes),
                                    cudaMemcpyDeviceToDevice, copyS),
                    ctx.who());
  uint64_t copied = ctx.record(copyS);
  ctx.wait(ctx.compute(), copied); // the caller may overwrite its buffer
  ctx.wait(sendS, copied);
  settle(e, ncclSend(copy, size_t(bytes), ncclChar, 1, e.nccl, sendS),
         "send to rank " + std::to_string(peer));
  FRENZY_CUDA_CHECK(cudaFreeAsync(copy, sendS), ctx.who());
  pendingSends.push_back({ctx.record(sendS), peer, &e});
}

std::unique_ptr<Work> NcclComm::isend(const void *data, int64_t bytes, int peer,
                                      int tag) {
  if (!onDevice(data))
    return host.isend(data, bytes, peer, tag);
  Entry &e = p2p(me, peer);
  std::string what = "send to rank " + std::to_string(peer);
  if (!e.nccl) {
    send(data, bytes, peer, tag); // staged: the buffer is free at once
    return std::make_unique<StreamWork>(*this, ctx.record(ctx.compute()), &e,
                                        what);
  }
  cudaStream_t s = stream("send", peer);
  ctx.wait(s, ctx.record(ctx.compute()));
  settle(e, ncclSend(data, size_t(bytes), ncclChar, 1, e.nccl, s), what);
  uint64_t ev = ctx.record(s);
  pendingSends.push_back({ev, peer, &e});
  return std::make_unique<StreamWork>(*this, ev, &e, what);
}

std::unique_ptr<Work> NcclComm::irecv(void *data, int64_t bytes, int peer,
                                      int tag) {
  if (!onDevice(data))
    return host.irecv(data, bytes, peer, tag);
  Entry &e = p2p(peer, me);
  std::string what = "receive from rank " + std::to_string(peer);
  if (!e.nccl)
    return std::make_unique<StagedRecv>(*this, data, bytes, peer, tag);
  cudaStream_t s = stream("recv", peer);
  // A tensor shared by the micro-batches may still be read by the compute
  // stream; a fresh per-micro-batch buffer is not (host/StreamOrder).
  if (!sharedTag || sharedTag(tag))
    ctx.wait(s, ctx.record(ctx.compute()));
  settle(e, ncclRecv(data, size_t(bytes), ncclChar, 0, e.nccl, s), what);
  return std::make_unique<StreamWork>(*this, ctx.record(s), &e, what);
}

void NcclComm::recv(void *data, int64_t bytes, int peer, int tag) {
  if (!onDevice(data))
    return host.recv(data, bytes, peer, tag);
  irecv(data, bytes, peer, tag)->wait(); // the consumer comes after
}

void NcclComm::waitSends() {
  for (const PendingSend &p : pendingSends)
    waitEvent(p.event, p.entry, "send to rank " + std::to_string(p.peer));
  pendingSends.clear();
  host.waitSends(); // the fallback's
}

void NcclComm::synchronize(const std::string &during) {
  waitSends();
  std::vector<cudaStream_t> all = used;
  all.push_back(ctx.compute());
  for (cudaStream_t s : all) {
    uint64_t ev = ctx.record(s);
    // Any communicator may be the one a stuck stream waits on: check all.
    auto t0 = std::chrono::steady_clock::now();
    while (!ctx.done(ev)) {
      for (Entry &e : entries)
        if (e.nccl) {
          ncclResult_t r = ncclSuccess;
          ncclCommGetAsyncError(e.nccl, &r);
          if (r != ncclSuccess && r != ncclInProgress)
            fail(ctx.who() + ": " + during + ": NCCL error on " +
                 e.spec.name() + ": " + ncclGetErrorString(r) +
                 " (a peer may have died)");
        }
      if (secondsSince(t0) > timeout)
        fail(ctx.who() + ": " + during + " did not finish within " +
             std::to_string(int(timeout)) + " s (a peer rank died or stopped)");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  ctx.reclaim();
}

std::vector<CommSpec> NcclComm::specs() const {
  std::vector<CommSpec> out;
  for (const Entry &e : entries)
    out.push_back(e.spec);
  return out;
}

// --- Groups and collectives ----------------------------------------------

Group NcclComm::group(const std::vector<int32_t> &ranks, int tag) {
  int found = -1;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].spec.kind != CommSpec::P2P && entries[i].spec.ranks == ranks)
      found = int(i);
  // A group the plan does not have gets a communicator of its own, made
  // now (every member calls group() together); where two members share a
  // GPU it stays on the host fallback, as CommPlan decides.
  std::set<std::string> gpus;
  for (int32_t r : ranks)
    if (r >= 0 && size_t(r) < gpuOf.size() && !gpuOf[size_t(r)].empty())
      gpus.insert(gpuOf[size_t(r)]);
  if (found < 0 && ranks.size() > 1 && gpus.size() == ranks.size()) {
    Entry &e = entries.emplace_back();
    e.spec.kind = CommSpec::DP;
    e.spec.ranks = ranks;
    int idx = e.spec.indexOf(me);
    ncclUniqueId id{};
    if (idx == 0) {
      FRENZY_NCCL_CHECK(ncclGetUniqueId(&id), ctx.who());
      for (size_t k = 1; k < ranks.size(); ++k)
        host.send(&id, sizeof id, ranks[k], kIdTag);
      host.waitSends();
    } else {
      host.recv(&id, sizeof id, ranks[0], kIdTag);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r =
        ncclCommInitRankConfig(&e.nccl, int(ranks.size()), id, idx, &config);
    settle(e, r, "init");
    found = int(entries.size() - 1);
  }
  // Every member makes the host group too, in the same order (barrier,
  // host buffers, the fallback).
  hostGroups.push_back(host.group(ranks, tag));
  groupEntry.push_back(found);
  groupRanks.push_back(ranks);
  return Group{int(groupEntry.size() - 1)};
}

void NcclComm::staged(void *data, int64_t bytes, bool in, bool out,
                      const std::function<void(void *)> &move) {
  std::vector<char> h(static_cast<size_t>(bytes));
  if (in) {
    ctx.synchronize(ctx.compute(), timeout, "the data of a staged transfer");
    FRENZY_CUDA_CHECK(
        cudaMemcpy(h.data(), data, size_t(bytes), cudaMemcpyDeviceToHost),
        ctx.who());
  }
  move(h.data());
  if (out) {
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(data, h.data(), size_t(bytes),
                                      cudaMemcpyHostToDevice, ctx.compute()),
                      ctx.who());
    // The host buffer must outlive the copy.
    ctx.synchronize(ctx.compute(), timeout, "a staged transfer");
  }
}

template <class T>
void NcclComm::reduce(T *data, int64_t n, Group g, ncclDataType_t type,
                      ncclRedOp_t op, const Arrived &arrived) {
  Entry *e = entryOf(g);
  Group hg = hostGroups[size_t(g.id)];
  auto onHost = [&](void *h) {
    if constexpr (std::is_same_v<T, int64_t>)
      host.allReduceMax(static_cast<T *>(h), n, hg);
    else
      host.allReduceSum(static_cast<T *>(h), n, hg, arrived);
  };
  if (!onDevice(data))
    return onHost(data);
  if (!e || !e->nccl)
    return staged(data, n * int64_t(sizeof(T)), true, true, onHost);
  settle(*e,
         ncclAllReduce(data, data, size_t(n), type, op, e->nccl, ctx.compute()),
         "all-reduce");
  if (arrived)
    arrived(0); // the wait happens on the GPU
}

void NcclComm::allReduceSum(float *data, int64_t n, Group g,
                            const Arrived &arrived) {
  reduce(data, n, g, ncclType(data), ncclSum, arrived);
}

void NcclComm::allReduceSum(double *data, int64_t n, Group g,
                            const Arrived &arrived) {
  reduce(data, n, g, ncclType(data), ncclSum, arrived);
}

void NcclComm::allReduceMax(int64_t *data, int64_t n, Group g) {
  reduce(data, n, g, ncclType(data), ncclMax, nullptr);
}

void NcclComm::allGather(const float *mine, float *all, int64_t n, Group g) {
  Entry *e = entryOf(g);
  Group hg = hostGroups[size_t(g.id)];
  int64_t members = int64_t(groupRanks[size_t(g.id)].size());
  if (!onDevice(mine))
    return host.allGather(mine, all, n, hg);
  if (!e || !e->nccl) {
    int64_t bytes = n * int64_t(sizeof(float));
    std::vector<float> h(static_cast<size_t>(n));
    ctx.synchronize(ctx.compute(), timeout, "the chunk of an all-gather");
    FRENZY_CUDA_CHECK(cudaMemcpy(h.data(), mine, size_t(bytes),
                                 cudaMemcpyDeviceToHost),
                      ctx.who());
    return staged(all, bytes * members, false, true, [&](void *out) {
      host.allGather(h.data(), static_cast<float *>(out), n, hg);
    });
  }
  settle(*e,
         ncclAllGather(mine, all, size_t(n), ncclFloat, e->nccl,
                       ctx.compute()),
         "all-gather");
}

void NcclComm::reduceScatterSum(const float *all, float *mine, int64_t n,
                                Group g) {
  Entry *e = entryOf(g);
  Group hg = hostGroups[size_t(g.id)];
  int64_t members = int64_t(groupRanks[size_t(g.id)].size());
  if (!onDevice(all))
    return host.reduceScatterSum(all, mine, n, hg);
  if (!e || !e->nccl) {
    int64_t bytes = n * int64_t(sizeof(float));
    std::vector<float> h(static_cast<size_t>(n * members));
    ctx.synchronize(ctx.compute(), timeout, "the input of a reduce-scatter");
    FRENZY_CUDA_CHECK(cudaMemcpy(h.data(), all, size_t(bytes * members),
                                 cudaMemcpyDeviceToHost),
                      ctx.who());
    return staged(mine, bytes, false, true, [&](void *out) {
      host.reduceScatterSum(h.data(), static_cast<float *>(out), n, hg);
    });
  }
  settle(*e,
         ncclReduceScatter(all, mine, size_t(n), ncclFloat, ncclSum, e->nccl,
                           ctx.compute()),
         "reduce-scatter");
}

void NcclComm::broadcast(void *data, int64_t bytes, int root, Group g) {
  Entry *e = entryOf(g);
  Group hg = hostGroups[size_t(g.id)];
  if (!onDevice(data))
    return host.broadcast(data, bytes, root, hg);
  if (!e || !e->nccl) {
    // Only the root's data needs to come off the device.
    bool isRoot = groupRanks[size_t(g.id)].at(size_t(root)) == me;
    return staged(data, bytes, isRoot, !isRoot,
                  [&](void *h) { host.broadcast(h, bytes, root, hg); });
  }
  settle(*e,
         ncclBroadcast(data, data, size_t(bytes), ncclChar, root, e->nccl,
                       ctx.compute()),
         "broadcast");
}

void NcclComm::barrier(Group g) {
  entryOf(g); // a member?
  host.barrier(hostGroups[size_t(g.id)]);
}

std::vector<int64_t> NcclComm::gather(int64_t value) {
  return host.gather(value);
}

std::vector<std::string> NcclComm::gatherBytes(const std::string &mine) {
  return host.gatherBytes(mine);
}
