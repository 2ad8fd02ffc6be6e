//===- NodeAllReduce.cpp - sums among ranks that share a node's cores -----===//
#include "NodeAllReduce.h"

#include "Tensor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace frenzy::rt {

struct alignas(64) NodeAllReduce::Header {
  std::atomic<int32_t> arrived;     // members in the current piece
  std::atomic<uint32_t> generation; // pieces finished (a futex word)
  std::atomic<int64_t> doneNs;      // when the last piece's sum was done
};

namespace {

void waitWhile(std::atomic<uint32_t> &word, uint32_t value) {
  while (word.load() == value) {
    timespec ts{0, 10'000'000}; // a dead member ends the job by MPI_Abort
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT,
            value, &ts, nullptr, 0);
  }
}

} // namespace

std::unique_ptr<NodeAllReduce> NodeAllReduce::create(MPI_Comm comm,
                                                     int64_t bytes) {
  int size = 1, rank = 0, localSize = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &localSize);
  MPI_Comm_free(&local);
  int allLocal = localSize == size ? 1 : 0, every = 0;
  MPI_Allreduce(&allLocal, &every, 1, MPI_INT, MPI_MIN, comm);
  if (!every || size < 2)
    return nullptr;
  std::unique_ptr<NodeAllReduce> r(new NodeAllReduce);
  r->me = rank;
  r->members = size;
  r->slotBytes = std::clamp<int64_t>((bytes + 63) / 64 * 64, 64, kSlotBytes);
  MPI_Aint total =
      rank == 0 ? MPI_Aint(64 + sizeof(Header) + (size + 2) * r->slotBytes) : 0;
  void *base = nullptr;
  if (MPI_Win_allocate_shared(total, 64, MPI_INFO_NULL, comm, &base,
                              &r->win) != MPI_SUCCESS)
    return nullptr;
  MPI_Aint got = 0;
  int unit = 0;
  MPI_Win_shared_query(r->win, 0, &got, &unit, &base);
  base = alignedShared(base);
  r->header = static_cast<Header *>(base);
  r->slots = static_cast<char *>(base) + sizeof(Header);
  if (rank == 0)
    new (r->header) Header{{0}, {0}, {0}};
  MPI_Barrier(comm);
  return r;
}

NodeAllReduce::~NodeAllReduce() {
  if (win != MPI_WIN_NULL)
    MPI_Win_free(&win);
}

void NodeAllReduce::sum(float *data, int64_t n, CoreTurns &turns,
                        uint64_t collective,
                        const std::function<void(double)> &arrived) {
  sumPieces(data, n, turns, collective, arrived);
}

void NodeAllReduce::sum(double *data, int64_t n, CoreTurns &turns,
                        uint64_t collective,
                        const std::function<void(double)> &arrived) {
  sumPieces(data, n, turns, collective, arrived);
}

template <class T>
void NodeAllReduce::sumPieces(T *data, int64_t n, CoreTurns &turns,
                              uint64_t collective,
                              const std::function<void(double)> &arrived) {
  const int64_t cap = slotBytes / int64_t(sizeof(T));
  bool first = true;
  for (int64_t off = 0; off < n || (n == 0 && first); off += cap) {
    int64_t m = std::min(cap, n - off);
    T *mine = reinterpret_cast<T *>(slots + me * slotBytes);
    // Two result slots, by piece parity: a member still copying out piece
    // k's sum cannot be overwritten by piece k+1's (which needs it to have
    // arrived, i.e. finished copying).
    T *result = reinterpret_cast<T *>(slots + (members + calls % 2) * slotBytes);
    std::memcpy(mine, data + off, size_t(m) * sizeof(T));
    int64_t arrival = CoreTurns::now();
    if (header->arrived.fetch_add(1) + 1 == members) {
      // The last to arrive sums, in member order, then queues for its core
      // like the others: all leave at the sum's end, so every core's ranks
      // take it in rank order (keeping the core would put the last one
      // first: an order that turned with which core it was on).
      if (first && arrived)
        arrived(0);
      // In blocks that stay in L1: one pass over the members' slots and
      // the result (member by member over the whole buffer read the
      // result `members` times: ~15 GB/s against the memory rate).
      constexpr int64_t kBlock = 2048;
      for (int64_t b = 0; b < m; b += kBlock) {
        int64_t e = std::min(m, b + kBlock);
        const T *s0 = reinterpret_cast<const T *>(slots);
        std::copy(s0 + b, s0 + e, result + b);
        for (int k = 1; k < members; ++k) {
          const T *s = reinterpret_cast<const T *>(slots + k * slotBytes);
          for (int64_t i = b; i < e; ++i)
            result[i] += s[i];
        }
      }
      header->arrived.store(0);
      header->doneNs.store(CoreTurns::now());
      header->generation.store(calls + 1);
      syscall(SYS_futex, reinterpret_cast<uint32_t *>(&header->generation),
              FUTEX_WAKE, 1 << 30, nullptr, nullptr, 0);
      turns.release(arrival, collective);
      turns.acquire(header->doneNs.load());
    } else {
      turns.release(CoreTurns::now(), collective);
      waitWhile(header->generation, calls);
      if (first && arrived)
        arrived(double(CoreTurns::now() - header->doneNs.load()) * 1e-9);
      turns.acquire(header->doneNs.load());
    }
    std::memcpy(data + off, result, size_t(m) * sizeof(T));
    ++calls;
    first = false;
    if (n == 0)
      break;
  }
}

} // namespace frenzy::rt
