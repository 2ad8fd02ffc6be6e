//===- NcclComms.cpp - the NCCL communicators of a CUDA rank --------------===//
#include "NcclComms.h"

#include "CudaCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

constexpr int kIdTag = 0x6e63; // ncclUniqueId messages: above tensor tags' use

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

/// Physical GPU ids of every rank (what decides NCCL or the fallback).
std::vector<std::string> gatherGpuIds(const std::string &mine, int world) {
  constexpr int kLen = 320;
  std::vector<char> buf(size_t(kLen) * world, 0), own(kLen, 0);
  std::strncpy(own.data(), mine.c_str(), kLen - 1);
  MPI_Allgather(own.data(), kLen, MPI_CHAR, buf.data(), kLen, MPI_CHAR,
                MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < world; ++r)
    out.emplace_back(buf.data() + size_t(r) * kLen);
  return out;
}

/// MPI counts are int: move big buffers in pieces.
template <typename F> void inPieces(int64_t bytes, F f) {
  constexpr int64_t kPiece = int64_t(1) << 30;
  for (int64_t at = 0; at < bytes; at += kPiece)
    f(at, int(std::min(kPiece, bytes - at)));
}

} // namespace

NcclComms::NcclComms(const plan::Plan &plan, DeviceContext &ctx,
                     double timeoutSeconds)
    : ctx(ctx), timeout(timeoutSeconds) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::vector<std::string> gpuOf = gatherGpuIds(ctx.physicalId(), world);
  std::vector<CommSpec> allSpecs = planCommunicators(plan, gpuOf);
  int me = ctx.rank();
  // Ids first (plain MPI, matched by order and tag), then every NCCL init
  // in one group so that no init waits for another.
  std::vector<ncclUniqueId> ids(allSpecs.size());
  for (size_t i = 0; i < allSpecs.size(); ++i) {
    const CommSpec &c = allSpecs[i];
    int idx = c.indexOf(me);
    if (c.transport == Transport::Mpi) {
      if (c.kind != CommSpec::P2P) {
        // MPI_Comm_create_group is collective over the members only.
        MPI_Group worldGroup, g;
        MPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
        MPI_Group_incl(worldGroup, int(c.ranks.size()), c.ranks.data(), &g);
        MPI_Comm comm = MPI_COMM_NULL;
        if (idx >= 0)
          MPI_Comm_create_group(MPI_COMM_WORLD, g, int(i), &comm);
        MPI_Group_free(&g);
        MPI_Group_free(&worldGroup);
        if (idx >= 0)
          entries.push_back({c, nullptr, comm});
      } else if (idx >= 0) {
        entries.push_back({c, nullptr, MPI_COMM_WORLD});
      }
      continue;
    }
    if (idx < 0)
      continue;
    if (idx == 0) {
      FRENZY_NCCL_CHECK(ncclGetUniqueId(&ids[i]), ctx.who());
      for (size_t k = 1; k < c.ranks.size(); ++k)
        MPI_Send(&ids[i], sizeof(ncclUniqueId), MPI_BYTE, c.ranks[k], kIdTag,
                 MPI_COMM_WORLD);
    } else {
      MPI_Recv(&ids[i], sizeof(ncclUniqueId), MPI_BYTE, c.ranks[0], kIdTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    entries.push_back({c, nullptr, MPI_COMM_NULL});
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0; // returns at once; we poll with a deadline
  FRENZY_NCCL_CHECK(ncclGroupStart(), ctx.who());
  for (size_t i = 0, e = 0; i < allSpecs.size(); ++i) {
    const CommSpec &c = allSpecs[i];
    if (c.indexOf(me) < 0)
      continue;
    Entry &en = entries[e++];
    if (c.transport != Transport::Nccl)
      continue;
    ncclResult_t r =
        ncclCommInitRankConfig(&en.nccl, int(c.ranks.size()), ids[i],
                               c.indexOf(me), &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      ncclGroupEnd();
      fail(ctx.who() + ": NCCL init of " + c.name() + ": " +
           ncclGetErrorString(r));
    }
  }
  ncclResult_t r = ncclGroupEnd();
  for (Entry &en : entries)
    if (en.nccl)
      settle(en, r, "init");
  for (const Entry &en : entries)
    specs.push_back(en.spec);
}

NcclComms::~NcclComms() {
  waitSends();
  for (Entry &e : entries) {
    if (e.nccl) {
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
    if (e.mpi != MPI_COMM_NULL && e.mpi != MPI_COMM_WORLD)
      MPI_Comm_free(&e.mpi);
  }
}

void NcclComms::abortAll() {
  for (Entry &e : entries)
    if (e.nccl) {
      ncclCommAbort(e.nccl);
      e.nccl = nullptr;
    }
}

void NcclComms::fail(const std::string &msg) {
  abortAll();
  throw RuntimeError(msg + "; ending all ranks");
}

void NcclComms::settle(Entry &e, ncclResult_t r, const char *what) {
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

const CommSpec *NcclComms::forGroup(int group) const {
  for (const Entry &e : entries)
    if (e.spec.group == group)
      return &e.spec;
  return nullptr;
}

NcclComms::Entry &NcclComms::entry(const CommSpec &c) {
  for (Entry &e : entries)
    if (e.spec.kind == c.kind && e.spec.ranks == c.ranks)
      return e;
  throw RuntimeError(ctx.who() + ": not a member of " + c.name());
}

NcclComms::Entry &NcclComms::p2p(int from, int to) {
  for (Entry &e : entries)
    if (e.spec.kind == CommSpec::P2P && e.spec.ranks[0] == from &&
        e.spec.ranks[1] == to)
      return e;
  throw RuntimeError(ctx.who() + ": the plan has no transfer from rank " +
                     std::to_string(from) + " to rank " + std::to_string(to) +
                     "; re-emit the plan with frenzy-opt");
}

void NcclComms::allReduceSum(const CommSpec &c, float *data, int64_t n,
                             cudaStream_t s) {
  Entry &e = entry(c);
  if (e.nccl) {
    settle(e, ncclAllReduce(data, data, size_t(n), ncclFloat, ncclSum, e.nccl,
                            s),
           "all-reduce");
    return;
  }
  // Fallback: the device value through the host, MPI as the CPU backend.
  std::vector<float> host(static_cast<size_t>(n));
  ctx.synchronize(s, timeout, "the data of an all-reduce on " + c.name());
  FRENZY_CUDA_CHECK(cudaMemcpy(host.data(), data, size_t(n) * 4,
                               cudaMemcpyDeviceToHost),
                    ctx.who());
  inPieces(n * 4, [&](int64_t at, int len) {
    MPI_Allreduce(MPI_IN_PLACE, host.data() + at / 4, len / 4, MPI_FLOAT,
                  MPI_SUM, e.mpi);
  });
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(data, host.data(), size_t(n) * 4,
                                    cudaMemcpyHostToDevice, s),
                    ctx.who());
  ctx.synchronize(s, timeout, "an all-reduce on " + c.name());
}

void NcclComms::broadcast(const CommSpec &c, void *data, int64_t bytes,
                          int root, cudaStream_t s) {
  Entry &e = entry(c);
  if (e.nccl) {
    settle(e, ncclBroadcast(data, data, size_t(bytes), ncclChar, root, e.nccl,
                            s),
           "broadcast");
    return;
  }
  std::vector<char> host(static_cast<size_t>(bytes));
  bool isRoot = c.indexOf(ctx.rank()) == root;
  if (isRoot) {
    ctx.synchronize(s, timeout, "the data of a broadcast on " + c.name());
    FRENZY_CUDA_CHECK(cudaMemcpy(host.data(), data, size_t(bytes),
                                 cudaMemcpyDeviceToHost),
                      ctx.who());
  }
  inPieces(bytes, [&](int64_t at, int len) {
    MPI_Bcast(host.data() + at, len, MPI_BYTE, root, e.mpi);
  });
  if (!isRoot) {
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(data, host.data(), size_t(bytes),
                                      cudaMemcpyHostToDevice, s),
                      ctx.who());
    ctx.synchronize(s, timeout, "a broadcast on " + c.name());
  }
}

void NcclComms::send(int peer, const void *data, int64_t bytes, int tag,
                     cudaStream_t s) {
  Entry &e = p2p(ctx.rank(), peer);
  if (e.nccl) {
    settle(e, ncclSend(data, size_t(bytes), ncclChar, 1, e.nccl, s), "send");
    return;
  }
  std::vector<char> host(static_cast<size_t>(bytes));
  ctx.synchronize(s, timeout, "a tensor to send to rank " +
                                  std::to_string(peer));
  FRENZY_CUDA_CHECK(cudaMemcpy(host.data(), data, size_t(bytes),
                               cudaMemcpyDeviceToHost),
                    ctx.who());
  // Nonblocking, as the CPU backend: a sender never waits for its receiver,
  // so no stream order deadlocks on buffer space.
  pendingSends.emplace_back();
  auto &[buf, reqs] = pendingSends.back();
  buf = std::move(host);
  inPieces(bytes, [&](int64_t at, int len) {
    reqs.emplace_back();
    MPI_Isend(buf.data() + at, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
              &reqs.back());
  });
}

void NcclComms::waitSends() {
  for (auto &[buf, reqs] : pendingSends)
    MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  pendingSends.clear();
}

void NcclComms::recv(int peer, void *data, int64_t bytes, int tag,
                     cudaStream_t s) {
  Entry &e = p2p(peer, ctx.rank());
  if (e.nccl) {
    settle(e, ncclRecv(data, size_t(bytes), ncclChar, 0, e.nccl, s), "recv");
    return;
  }
  std::vector<char> host(static_cast<size_t>(bytes));
  inPieces(bytes, [&](int64_t at, int len) {
    MPI_Recv(host.data() + at, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  });
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(data, host.data(), size_t(bytes),
                                    cudaMemcpyHostToDevice, s),
                    ctx.who());
  ctx.synchronize(s, timeout, "a tensor received from rank " +
                                  std::to_string(peer));
}
