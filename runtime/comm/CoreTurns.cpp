//===- CoreTurns.cpp - CPU ranks that share a core take explicit turns ----===//
#include "CoreTurns.h"

#include "Tensor.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace frenzy::rt {

namespace {

// One cache line each: core-mates write their own slots all the time.
struct alignas(64) CoreSlot {
  std::atomic<int32_t> holder; // local rank holding the core, -1: free
};
enum : int32_t { Idle = 0, Pending = 1, Ready = 2 };
struct alignas(64) RankSlot {
  std::atomic<int64_t> key;        // when its wait began (ns)
  std::atomic<uint64_t> collective; // the collective it waits in (Pending)
  std::atomic<int32_t> state;
};
static_assert(std::atomic<int32_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free,
              "turns need lock-free atomics in shared memory");

// A core-mate that left the same collective with an earlier key gets this
// long to say so before the others stop waiting for it (it may have been
// descheduled between the collective's end and its acquire()).
constexpr int64_t kPendingGraceNs = 300'000;

// A turn no rank gives up for this long means its holder is blocked where
// no turn rule sees it (a raw MPI call waiting for this very rank): this
// rank goes on without turns rather than let the job hang. 2 s by default;
// FRENZY_CORE_TURNS_WATCHDOG=SECONDS changes it, for tests on a machine so
// loaded that a holder's compute alone can take 2 s (core-turns.test
// asserts the turns held, which needs the watchdog never to fire).
int64_t stuckNs() {
  static const int64_t ns = [] {
    const char *v = std::getenv("FRENZY_CORE_TURNS_WATCHDOG");
    double s = v ? std::atof(v) : 0;
    return s > 0 ? int64_t(s * 1e9) : int64_t(2'000'000'000);
  }();
  return ns;
}

void futexWait(std::atomic<int32_t> &word, int32_t seen, int64_t ns) {
  timespec ts{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
  // Shared (not _PRIVATE): the word lives in another process's mapping too.
  syscall(SYS_futex, reinterpret_cast<int32_t *>(&word), FUTEX_WAIT, seen, &ts,
          nullptr, 0);
}

void futexWakeAll(std::atomic<int32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<int32_t *>(&word), FUTEX_WAKE, 1 << 30,
          nullptr, nullptr, 0);
}

} // namespace

struct CoreTurns::Shared {
  CoreSlot *bell; // rung when a message is sent or received on the node
  CoreSlot *core;
  RankSlot *rank;
};

int64_t CoreTurns::now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::unique_ptr<CoreTurns> CoreTurns::create(bool wanted, int cores) {
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &local);
  int lr = 0, ls = 1;
  MPI_Comm_rank(local, &lr);
  MPI_Comm_size(local, &ls);
  if (cores <= 0)
    cores = int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  // Every rank of the job decides alike (a node without sharing still
  // takes part in the window's collective creation: none is made).
  int share = wanted && ls > cores ? 1 : 0, all = 0, any = 0;
  int want = wanted ? 1 : 0;
  MPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&share, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!all || !any) {
    MPI_Comm_free(&local);
    return nullptr;
  }
  std::unique_ptr<CoreTurns> t(new CoreTurns);
  t->local = local;
  t->localRank = lr;
  t->localSize = ls;
  t->cores = std::min(cores, ls);
  // frenzy-launch binds the node's i-th rank to core i mod cores.
  t->myCore = lr % t->cores;
  MPI_Aint bytes =
      lr == 0
          ? MPI_Aint(64 + sizeof(CoreSlot) * (1 + t->cores) +
                     sizeof(RankSlot) * ls)
              : 0;
  void *base = nullptr;
  if (MPI_Win_allocate_shared(bytes, 64, MPI_INFO_NULL, local, &base,
                              &t->win) != MPI_SUCCESS)
    throw RuntimeError("cannot share memory between this node's ranks "
                       "(MPI_Win_allocate_shared); run with --core-turns=off");
  MPI_Aint size = 0;
  int unit = 0;
  MPI_Win_shared_query(t->win, 0, &size, &unit, &base);
  auto *bell = static_cast<CoreSlot *>(alignedShared(base));
  auto *cs = bell + 1;
  auto *rs = reinterpret_cast<RankSlot *>(cs + t->cores);
  t->shm = new Shared{bell, cs, rs};
  if (lr == 0) {
    new (bell) CoreSlot{{0}};
    for (int c = 0; c < t->cores; ++c)
      new (&cs[c]) CoreSlot{{-1}};
    for (int r = 0; r < ls; ++r)
      new (&rs[r]) RankSlot{{0}, {0}, {Idle}};
  }
  MPI_Barrier(local);
  // The first turns go in rank order: everyone "began waiting" at once
  // (as leaving one collective: a later rank that gets here first waits).
  t->release(1, ~uint64_t(0));
  t->acquire(1);
  return t;
}

CoreTurns::~CoreTurns() {
  stop();
  if (win != MPI_WIN_NULL)
    MPI_Win_free(&win);
  if (local != MPI_COMM_NULL)
    MPI_Comm_free(&local);
  delete shm;
}

void CoreTurns::release(int64_t key, uint64_t collective) {
  if (stopped)
    return;
  waitKey = std::max<int64_t>(key, 1);
  waitCollective = collective;
  RankSlot &me = shm->rank[localRank];
  me.key.store(waitKey);
  me.collective.store(collective);
  me.state.store(collective ? Pending : Idle);
  if (held) {
    held = false;
    shm->core[myCore].holder.store(-1);
    futexWakeAll(shm->core[myCore].holder);
  }
}

bool CoreTurns::best(int64_t key, uint64_t collective,
                     bool ignorePending) const {
  for (int j = myCore; j < localSize; j += cores) {
    if (j == localRank)
      continue;
    const RankSlot &s = shm->rank[j];
    int32_t st = s.state.load();
    if (st == Idle)
      continue;
    int64_t k = s.key.load();
    bool earlier = k < key || (k == key && j < localRank);
    if (st == Ready && !earlier)
      continue;
    if (st == Ready)
      return false;
    // A lower core-mate still leaving the same collective will end its
    // wait at the same moment: it goes first.
    if (!ignorePending && collective && s.collective.load() == collective &&
        j < localRank)
      return false;
  }
  return true;
}

void CoreTurns::acquire(int64_t readyKey) {
  if (stopped || held)
    return;
  waitKey = std::max<int64_t>(readyKey > 0 ? readyKey : now(), 1);
  RankSlot &me = shm->rank[localRank];
  me.key.store(waitKey);
  me.state.store(Ready);
  std::atomic<int32_t> &holder = shm->core[myCore].holder;
  int64_t since = now();
  for (;;) {
    int32_t h = holder.load();
    if (h < 0) {
      bool ignore = now() - since > kPendingGraceNs;
      if (best(waitKey, waitCollective, ignore)) {
        int32_t freeCore = -1;
        if (holder.compare_exchange_strong(freeCore, localRank)) {
          me.state.store(Idle);
          held = true;
          futexWakeAll(holder); // the others re-check who is next
          return;
        }
        continue;
      }
    }
    if (now() - since > stuckNs()) {
      std::fprintf(stderr,
                   "frenzy-launch: warning: a rank of this node waited %.1f s "
                   "for its turn on core %d; it goes on without turns "
                   "(--core-turns=off avoids them)\n",
                   double(now() - since) * 1e-9, myCore);
      me.state.store(Idle);
      stopped = true;
      return;
    }
    // Held: sleep until it changes (a release wakes us). Free but not our
    // turn: an earlier waiter takes it (its take wakes us), or a pending
    // one's grace runs out.
    futexWait(holder, h, h < 0 ? 50'000 : 5'000'000);
  }
}

uint32_t CoreTurns::bell() const {
  return uint32_t(shm->bell->holder.load());
}

void CoreTurns::ring() {
  shm->bell->holder.fetch_add(1);
  futexWakeAll(shm->bell->holder);
}

void CoreTurns::nap(uint32_t seen, int64_t ns) {
  futexWait(shm->bell->holder, int32_t(seen), ns);
}

void CoreTurns::stop() {
  if (stopped || !shm)
    return;
  RankSlot &me = shm->rank[localRank];
  me.state.store(Idle);
  if (held) {
    held = false;
    shm->core[myCore].holder.store(-1);
    futexWakeAll(shm->core[myCore].holder);
  }
  stopped = true;
}

} // namespace frenzy::rt
