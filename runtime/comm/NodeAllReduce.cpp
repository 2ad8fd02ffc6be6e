//===- NodeAllReduce.cpp - collectives through a node's shared memory -----===//
#include "NodeAllReduce.h"

#include "Comm.h"
#include "Tensor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace frenzy::rt {

struct alignas(64) NodeAllReduce::Header {
  std::atomic<int32_t> arrived;     // members in the current round
  std::atomic<uint32_t> generation; // rounds finished (a futex word)
  std::atomic<int64_t> doneNs;      // when the last round was combined
};

// After the header, one word per member: the rounds it has arrived at (so
// a waiter that gives up can name who is missing).
static int64_t seenBytes(int members) {
  return (int64_t(members) * 4 + 63) / 64 * 64;
}

std::atomic<uint32_t> *NodeAllReduce::seen() const {
  return reinterpret_cast<std::atomic<uint32_t> *>(header + 1);
}

bool NodeAllReduce::allOnNode(MPI_Comm comm) {
  int size = 1, localSize = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &localSize);
  MPI_Comm_free(&local);
  int allLocal = localSize == size ? 1 : 0, every = 0;
  MPI_Allreduce(&allLocal, &every, 1, MPI_INT, MPI_MIN, comm);
  return every != 0;
}

std::unique_ptr<NodeAllReduce> NodeAllReduce::create(MPI_Comm comm,
                                                     int64_t bytes) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (!allOnNode(comm) || size < 2)
    return nullptr;
  std::unique_ptr<NodeAllReduce> r(new NodeAllReduce);
  r->me = rank;
  r->members = size;
  r->timeout = commTimeoutSeconds();
  r->slotBytes = std::clamp<int64_t>((bytes + 63) / 64 * 64, 64, kSlotBytes);
  int worldRank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  r->worldRanks.resize(size_t(size));
  MPI_Allgather(&worldRank, 1, MPI_INT, r->worldRanks.data(), 1, MPI_INT, comm);
  int64_t head = int64_t(sizeof(Header)) + seenBytes(size);
  MPI_Aint total =
      rank == 0 ? MPI_Aint(64 + head + (size + 2) * r->slotBytes) : 0;
  void *base = nullptr;
  if (MPI_Win_allocate_shared(total, 64, MPI_INFO_NULL, comm, &base,
                              &r->win) != MPI_SUCCESS)
    return nullptr;
  MPI_Aint got = 0;
  int unit = 0;
  MPI_Win_shared_query(r->win, 0, &got, &unit, &base);
  base = alignedShared(base);
  r->header = static_cast<Header *>(base);
  r->slots = static_cast<char *>(base) + head;
  if (rank == 0) {
    new (r->header) Header{{0}, {0}, {0}};
    for (int k = 0; k < size; ++k)
      new (r->seen() + k) std::atomic<uint32_t>(0);
  }
  MPI_Barrier(comm);
  return r;
}

NodeAllReduce::~NodeAllReduce() {
  if (win != MPI_WIN_NULL)
    MPI_Win_free(&win);
}

void NodeAllReduce::waitForRound(bool spin) {
  std::atomic<uint32_t> &word = header->generation;
  // Without turns a member's wait is usually short (the others are running
  // on their own cores): yield a few times before sleeping, as a futex
  // wake-up costs tens of microseconds.
  for (int i = 0; spin && i < 64 && word.load() == calls; ++i)
    sched_yield();
  int64_t deadline =
      timeout > 0 ? CoreTurns::now() + int64_t(timeout * 1e9) : 0;
  while (word.load() == calls) {
    timespec ts{0, 10'000'000}; // rechecks the deadline every 10 ms
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT,
            calls, &ts, nullptr, 0);
    if (deadline && word.load() == calls && CoreTurns::now() > deadline) {
      std::string missing;
      for (int k = 0; k < members; ++k)
        if (seen()[k].load() <= calls)
          missing += (missing.empty() ? "" : ", ") +
                     std::to_string(worldRanks[size_t(k)]);
      throw RuntimeError(
          "rank " + std::to_string(worldRanks[size_t(me)]) +
          ": shared-memory collective: rank " + missing +
          " did not arrive within " + std::to_string(int(timeout)) +
          " s (FRENZY_COMM_TIMEOUT; it died or stopped)");
    }
  }
}

template <class In, class Combine, class Out>
void NodeAllReduce::round(CoreTurns *turns, uint64_t collective,
                          const std::function<void(double)> *arrived, In in,
                          Combine combine, Out out) {
  // Two result slots, by round parity: a member still copying out round
  // k's result cannot be overwritten by round k+1's (which needs it to have
  // arrived, i.e. finished copying).
  char *result = slots + (members + calls % 2) * slotBytes;
  in(slots + me * slotBytes, result);
  int64_t arrival = CoreTurns::now();
  seen()[me].store(calls + 1);
  if (header->arrived.fetch_add(1) + 1 == members) {
    // The last to arrive combines, in member order, then (with turns)
    // queues for its core like the others: all leave at the round's end,
    // so every core's ranks take it in rank order (keeping the core would
    // put the last one first: an order that turned with which core it was
    // on).
    if (arrived && *arrived)
      (*arrived)(0);
    combine(result);
    header->arrived.store(0);
    header->doneNs.store(CoreTurns::now());
    header->generation.store(calls + 1);
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&header->generation),
            FUTEX_WAKE, 1 << 30, nullptr, nullptr, 0);
    if (turns) {
      turns->release(arrival, collective);
      turns->acquire(header->doneNs.load());
    }
  } else {
    if (turns)
      turns->release(CoreTurns::now(), collective);
    waitForRound(!turns);
    if (arrived && *arrived)
      (*arrived)(double(CoreTurns::now() - header->doneNs.load()) * 1e-9);
    if (turns)
      turns->acquire(header->doneNs.load());
  }
  out(result);
  ++calls;
}

template <class T, class Op>
void NodeAllReduce::reduce(T *data, int64_t n, CoreTurns *turns,
                           uint64_t collective,
                           const std::function<void(double)> &arrived, Op op) {
  const int64_t cap = slotBytes / int64_t(sizeof(T));
  bool first = true;
  for (int64_t off = 0; off < n || (n == 0 && first); off += cap) {
    int64_t m = std::min(cap, n - off);
    size_t bytes = size_t(m) * sizeof(T);
    round(
        turns, collective, first ? &arrived : nullptr,
        [&](char *mine, char *) { std::memcpy(mine, data + off, bytes); },
        [&](char *res) {
          // In blocks that stay in L1: one pass over the members' slots
          // and the result (member by member over the whole buffer read
          // the result `members` times: ~15 GB/s against the memory rate).
          T *result = reinterpret_cast<T *>(res);
          constexpr int64_t kBlock = 2048;
          for (int64_t b = 0; b < m; b += kBlock) {
            int64_t e = std::min(m, b + kBlock);
            const T *s0 = reinterpret_cast<const T *>(slots);
            std::copy(s0 + b, s0 + e, result + b);
            for (int k = 1; k < members; ++k) {
              const T *s = reinterpret_cast<const T *>(slots + k * slotBytes);
              for (int64_t i = b; i < e; ++i)
                result[i] = op(result[i], s[i]);
            }
          }
        },
        [&](char *res) { std::memcpy(data + off, res, bytes); });
    first = false;
    if (n == 0)
      break;
  }
}

namespace {
struct Plus {
  template <class T> T operator()(T a, T b) const { return a + b; }
};
struct Max {
  template <class T> T operator()(T a, T b) const { return a < b ? b : a; }
};
} // namespace

void NodeAllReduce::sum(float *data, int64_t n, CoreTurns *turns,
                        uint64_t collective,
                        const std::function<void(double)> &arrived) {
  reduce(data, n, turns, collective, arrived, Plus{});
}

void NodeAllReduce::sum(double *data, int64_t n, CoreTurns *turns,
                        uint64_t collective,
                        const std::function<void(double)> &arrived) {
  reduce(data, n, turns, collective, arrived, Plus{});
}

void NodeAllReduce::max(int64_t *data, int64_t n, CoreTurns *turns,
                        uint64_t collective) {
  reduce(data, n, turns, collective, nullptr, Max{});
}

void NodeAllReduce::broadcast(void *data, int64_t bytes, int root,
                              CoreTurns *turns, uint64_t collective) {
  char *d = static_cast<char *>(data);
  bool first = true;
  for (int64_t off = 0; off < bytes || first; off += slotBytes) {
    size_t m = size_t(std::min(slotBytes, bytes - off));
    // The root writes the result slot itself: it is free (every member
    // has finished copying out the round before last, see round()).
    round(
        turns, collective, nullptr,
        [&](char *, char *result) {
          if (me == root)
            std::memcpy(result, d + off, m);
        },
        [](char *) {},
        [&](char *result) {
          if (me != root)
            std::memcpy(d + off, result, m);
        });
    first = false;
    if (bytes == 0)
      break;
  }
}

void NodeAllReduce::barrier(CoreTurns *turns, uint64_t collective) {
  round(turns, collective, nullptr, [](char *, char *) {}, [](char *) {},
        [](char *) {});
}

} // namespace frenzy::rt
