//===- MpiComm.cpp - the Comm over MPI ------------------------------------===//
#include "MpiComm.h"

#include "Tensor.h"

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <ctime>
#include <sched.h>
#include <thread>

namespace frenzy::rt {

static constexpr int64_t kPiece = int64_t(1) << 30;

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw RuntimeError(std::string(what) + " failed: " + std::string(msg, len));
  }
}

/// Waits until `done()` without holding a core: a waiting rank whose
/// core-mates take turns sleeps (briefly yielding first, as a short wait
/// is the common one), so the rank holding the core runs undisturbed. It
/// sleeps on the node's doorbell, which every send and receive rings: a
/// message from the node wakes it at once, one from another node within
/// the backoff (2 to 50 us).
/// `deadline` (CoreTurns::now() nanoseconds, 0: none): returns false once
/// it has passed.
template <class F>
static bool sleepUntil(F done, CoreTurns &t, int64_t deadline = 0) {
  long ns = 2000;
  for (int spin = 0;; ++spin) {
    uint32_t seen = t.bell();
    if (done())
      return true;
    if (deadline && (spin & 63) == 0 && CoreTurns::now() > deadline)
      return false;
    if (spin < 16 || t.alone()) { // a rank with a core of its own polls on
      sched_yield();
      continue;
    }
    t.nap(seen, ns);
    ns = std::min(ns * 2, 50'000L);
  }
}

int64_t MpiComm::deadline() const {
  return timeout > 0 ? CoreTurns::now() + int64_t(timeout * 1e9) : 0;
}

void MpiComm::timedOut(const std::string &what) const {
  throw RuntimeError("rank " + std::to_string(me) + ": " + what +
                     " within " + std::to_string(int(timeout)) +
                     " s (FRENZY_COMM_TIMEOUT): the peer died or stopped");
}

namespace {
std::string gatherWait() { return "a gather over all ranks did not complete"; }
} // namespace

template <class F> void MpiComm::waitFor(F done, const std::string &what) {
  int64_t until = deadline();
  for (int spin = 0; !done(); ++spin) {
    sched_yield(); // ranks may outnumber cores: let the peer run
    if ((spin & 63) == 0 && CoreTurns::now() > until)
      timedOut(what);
  }
}

template <class F>
void MpiComm::waitWithoutCore(F done, const std::string &what) {
  active->release(CoreTurns::now());
  if (!sleepUntil(done, *active, deadline()))
    timedOut(what);
  active->acquire();
}

template <class W>
int MpiComm::complete(MPI_Request &r, W what, MPI_Status *st) {
  if (timeout <= 0)
    return MPI_Wait(&r, st);
  int rc = MPI_SUCCESS;
  waitFor(
      [&] {
        int done = 0;
        rc = MPI_Test(&r, &done, st);
        return done != 0 || rc != MPI_SUCCESS;
      },
      what());
  return rc;
}

std::string MpiComm::groupName(MPI_Comm c) const {
  auto it = groupRanks.find(c);
  return it == groupRanks.end() ? "all ranks" : "ranks " + it->second;
}

MpiComm::MpiComm(int *argc, char ***argv) {
  check(MPI_Init(argc, argv), "MPI_Init");
  // Errors come back as codes, so a rank can say what failed before the
  // job is ended.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  groups.push_back(MPI_COMM_WORLD);
  timeout = commTimeoutSeconds();
}

MpiComm::~MpiComm() {
  active = nullptr;
  nodeSums.clear();
  nodeSumsMade.clear();
  turns.reset();
  for (MPI_Comm &c : groups)
    if (c != MPI_COMM_NULL && c != MPI_COMM_WORLD)
      MPI_Comm_free(&c);
  MPI_Finalize();
}

bool launchedByMpi() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                        "PMI_RANK", "SLURM_PROCID"})
    if (std::getenv(v))
      return true;
  return false;
}

void MpiComm::send(const void *data, int64_t bytes, int peer, int tag) {
  Pending &p = pending.emplace_back();
  p.peer = peer;
  // The smallest spare buffer that holds it, else the largest (it grows).
  size_t fit = spare.size(), largest = spare.size();
  for (size_t i = 0; i < spare.size(); ++i) {
    size_t cap = spare[i].capacity();
    if (cap >= size_t(bytes) &&
        (fit == spare.size() || cap < spare[fit].capacity()))
      fit = i;
    if (largest == spare.size() || cap > spare[largest].capacity())
      largest = i;
  }
  size_t pick = fit < spare.size() ? fit : largest;
  if (pick < spare.size()) {
    p.data = std::move(spare[pick]);
    spare.erase(spare.begin() + long(pick));
  }
  p.data.assign(static_cast<const char *>(data),
                static_cast<const char *>(data) + bytes);
  for (int64_t off = 0; off < bytes || off == 0; off += kPiece) {
    int n = int(std::min(kPiece, bytes - off));
    MPI_Request r;
    check(MPI_Isend(p.data.data() + off, n, MPI_BYTE, peer, tag,
                    MPI_COMM_WORLD, &r),
          "MPI_Isend");
    p.requests.push_back(r);
    if (bytes == 0)
      break;
  }
  if (active)
    active->ring(); // a receiver asleep on this node looks now
}

void MpiComm::recv(void *data, int64_t bytes, int peer, int tag) {
  if (active || timeout > 0)
    probe(peer, tag); // the wait without the core, or against the deadline
  char *d = static_cast<char *>(data);
  for (int64_t off = 0; off < bytes || off == 0; off += kPiece) {
    int n = int(std::min(kPiece, bytes - off));
    MPI_Status st;
    MPI_Request r;
    // The envelope has arrived (probe), a large payload may not have: its
    // wait is against the deadline too.
    int rc = MPI_Irecv(d + off, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r);
    if (rc == MPI_SUCCESS)
      rc = complete(
          r,
          [&] {
            return "the rest of a message from rank " + std::to_string(peer) +
                   " (tag " + std::to_string(tag) + ") did not arrive";
          },
          &st);
    int cls = rc;
    if (rc != MPI_SUCCESS)
      MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_TRUNCATE)
      throw RuntimeError("rank " + std::to_string(peer) + " sent more than " +
                         std::to_string(n) + " bytes of tensor " +
                         std::to_string(tag) +
                         " (ranks run different plans?)");
    check(rc, "MPI_Recv");
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != n)
      throw RuntimeError("rank " + std::to_string(peer) + " sent " +
                         std::to_string(got) + " bytes of tensor " +
                         std::to_string(tag) + ", expected " +
                         std::to_string(n) +
                         " (ranks run different plans?)");
    if (bytes == 0)
      break;
  }
  if (active)
    active->ring(); // the sender asleep in waitSends looks now
}

namespace {
/// The requests of one message (several pieces past 1 GiB).
class MpiWork final : public Work {
public:
  MpiWork(int peer, int me, double timeout)
      : peer(peer), me(me), timeout(timeout) {}
  std::vector<MPI_Request> requests;
  bool test() override {
    int done = 0;
    check(MPI_Testall(int(requests.size()), requests.data(), &done,
                      MPI_STATUSES_IGNORE),
          ("MPI_Testall (peer rank " + std::to_string(peer) + ")").c_str());
    return done != 0;
  }
  void wait() override {
    if (timeout > 0) {
      // Against the deadline: MPI_Waitall would wait forever on a peer
      // that stopped.
      int64_t until = CoreTurns::now() + int64_t(timeout * 1e9);
      for (int spin = 0; !test(); ++spin) {
        sched_yield();
        if ((spin & 63) == 0 && CoreTurns::now() > until)
          throw RuntimeError("rank " + std::to_string(me) +
                             ": a transfer with rank " + std::to_string(peer) +
                             " did not complete within " +
                             std::to_string(int(timeout)) +
                             " s (FRENZY_COMM_TIMEOUT): the peer died or "
                             "stopped");
      }
      return;
    }
    check(MPI_Waitall(int(requests.size()), requests.data(),
                      MPI_STATUSES_IGNORE),
          ("MPI_Waitall (peer rank " + std::to_string(peer) + ")").c_str());
  }
  ~MpiWork() override {
    // An abandoned handle must not leave MPI writing into freed memory.
    for (MPI_Request &r : requests)
      if (r != MPI_REQUEST_NULL)
        MPI_Cancel(&r), MPI_Request_free(&r);
  }

private:
  int peer, me;
  double timeout;
};

/// Posts `post(offset, count)` for each piece of a message.
template <class F>
std::unique_ptr<Work> pieces(int peer, int me, double timeout, int64_t bytes,
                             F post) {
  auto w = std::make_unique<MpiWork>(peer, me, timeout);
  for (int64_t off = 0; off < bytes || off == 0; off += kPiece) {
    MPI_Request r;
    post(off, int(std::min(kPiece, bytes - off)), &r);
    w->requests.push_back(r);
    if (bytes == 0)
      break;
  }
  return w;
}
} // namespace

std::unique_ptr<Work> MpiComm::isend(const void *data, int64_t bytes, int peer,
                                     int tag) {
  const char *d = static_cast<const char *>(data);
  auto w = pieces(peer, me, timeout, bytes, [&](int64_t off, int n, MPI_Request *r) {
    check(MPI_Isend(d + off, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, r),
          "MPI_Isend");
  });
  if (active)
    active->ring();
  return w;
}

std::unique_ptr<Work> MpiComm::irecv(void *data, int64_t bytes, int peer,
                                     int tag) {
  char *d = static_cast<char *>(data);
  return pieces(peer, me, timeout, bytes, [&](int64_t off, int n, MPI_Request *r) {
    check(MPI_Irecv(d + off, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, r),
          "MPI_Irecv");
  });
}

void MpiComm::probe(int peer, int tag, double napUntil) {
  using Clock = std::chrono::steady_clock;
  auto until = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(napUntil)));
  // Naps only while 0.1 ms remain: a wake-up can take tens of
  // microseconds, and a short expected wait is better spun.
  until -= std::chrono::microseconds(100);
  while (Clock::now() < until && !arrived(peer, tag))
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  probe(peer, tag);
}

void MpiComm::probe(int peer, int tag) {
  auto what = [&] {
    return "no message from rank " + std::to_string(peer) + " (tag " +
           std::to_string(tag) + ")";
  };
  if (active) {
    if (!arrived(peer, tag)) // no wait: the core is kept
      waitWithoutCore([&] { return arrived(peer, tag); }, what());
    return;
  }
  if (timeout > 0) {
    waitFor([&] { return arrived(peer, tag); }, what());
    return;
  }
  check(MPI_Probe(peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Probe");
}

bool MpiComm::arrived(int peer, int tag) {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
  return flag != 0;
}

bool MpiComm::testSends() {
  for (Pending &p : pending) {
    int done = 0;
    check(MPI_Testall(int(p.requests.size()), p.requests.data(), &done,
                      MPI_STATUSES_IGNORE),
          "MPI_Testall");
    if (!done) {
      stuckPeer = p.peer;
      return false;
    }
  }
  return true;
}

void MpiComm::progress() {
  // MPI_Test* runs the progress engine: a rendezvous whose receiver has
  // answered starts moving its data now, not at this rank's next send or
  // receive. testSends stops at the first unfinished send, which is enough
  // to drive the engine.
  testSends();
}

void MpiComm::waitSends() {
  if (active && !testSends()) {
    // A receiver on another core takes its message within microseconds:
    // keep the core that long (giving it up let a core-mate run its whole
    // forward and backward first: the uneven plan's owner of the tied
    // embedding lost 2 ms a step). The timeline's sends never wait. A
    // receiver on this core needs it, hence the bound.
    int64_t until = CoreTurns::now() + 200'000;
    bool done = false;
    while (!done && CoreTurns::now() < until)
      done = testSends();
    if (!done)
      waitWithoutCore([&] { return testSends(); }, sendsStuck());
  } else if (timeout > 0 && !testSends()) {
    waitFor([&] { return testSends(); }, sendsStuck());
  }
  for (Pending &p : pending) {
    check(MPI_Waitall(int(p.requests.size()), p.requests.data(),
                      MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    if (spare.size() < 256)
      spare.push_back(std::move(p.data));
  }
  pending.clear();
}

std::string MpiComm::sendsStuck() const {
  return "a message to rank " + std::to_string(stuckPeer) +
         " was not received";
}

MPI_Comm MpiComm::mpi(Group g) const {
  if (g.id < 0 || size_t(g.id) >= groups.size() || groups[g.id] == MPI_COMM_NULL)
    throw RuntimeError("rank " + std::to_string(me) + ": no communicator " +
                       std::to_string(g.id) + " (not a member of that group)");
  return groups[size_t(g.id)];
}

Group MpiComm::group(const std::vector<int32_t> &ranks, int tag) {
  MPI_Group world, sub;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> r(ranks.begin(), ranks.end());
  MPI_Group_incl(world, int(r.size()), r.data(), &sub);
  MPI_Comm c = MPI_COMM_NULL;
  check(MPI_Comm_create_group(MPI_COMM_WORLD, sub, tag, &c),
        "MPI_Comm_create_group");
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  groups.push_back(c);
  groupTags[c] = tag;
  std::string names;
  for (int32_t x : ranks)
    names += (names.empty() ? "[" : ",") + std::to_string(x);
  groupRanks[c] = names + "]";
  return Group{int(groups.size() - 1)};
}

uint64_t MpiComm::collectiveId(MPI_Comm c) {
  auto it = groupTags.find(c);
  uint64_t tag = it == groupTags.end() ? 0 : uint64_t(it->second) + 1;
  return (tag << 40) | ++collCalls[c];
}

void MpiComm::arrive(MPI_Comm c) {
  if (!active && timeout <= 0) {
    check(MPI_Barrier(c), "MPI_Barrier");
    return;
  }
  if (!active) {
    MPI_Request r;
    check(MPI_Ibarrier(c, &r), "MPI_Ibarrier");
    waitFor(
        [&] {
          int done = 0;
          check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
          return done != 0;
        },
        "a member of the collective over " + groupName(c) +
            " did not arrive");
    return;
  }
  uint64_t id = collectiveId(c);
  MPI_Request r;
  check(MPI_Ibarrier(c, &r), "MPI_Ibarrier");
  int done = 0;
  auto test = [&] {
    check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  };
  active->ring(); // members asleep in this barrier progress it
  if (test())
    return; // the last to arrive keeps its core
  active->release(CoreTurns::now(), id);
  if (!sleepUntil(test, *active, deadline()))
    timedOut("a member of the collective over " + groupName(c) +
             " did not arrive");
}

NodeAllReduce *MpiComm::nodeSum(MPI_Comm c, int elemBytes, int64_t bytes) {
  auto key = std::make_pair(c, elemBytes);
  auto it = nodeSums.find(key);
  if (it == nodeSums.end()) {
    // Collective MPI calls: made without the core (a core-mate may need it
    // to get here).
    active->release(CoreTurns::now());
    nodeSumsMade.push_back(NodeAllReduce::create(c, bytes));
    it = nodeSums.emplace(key, nodeSumsMade.back().get()).first;
    active->acquire();
  }
  return it->second;
}

template <class T>
void MpiComm::sum(T *data, int64_t n, MPI_Datatype type, MPI_Comm comm,
               const Arrived &arrived) {
  if (active)
    if (NodeAllReduce *s =
            nodeSum(comm, int(sizeof(T)), n * int64_t(sizeof(T)))) {
      s->sum(data, n, active, collectiveId(comm), arrived);
      return;
    }
  // With turns every reduction waits for its members first (without the
  // core); the sum itself then runs with all of them polling.
  if (active || arrived || timeout > 0) {
    arrive(comm);
    if (arrived)
      arrived(0);
  }
  const int64_t piece = kPiece / int64_t(sizeof(T));
  for (int64_t off = 0; off < n; off += piece) {
    int count = int(std::min(piece, n - off));
    if (timeout > 0) {
      MPI_Request r;
      check(MPI_Iallreduce(MPI_IN_PLACE, data + off, count, type, MPI_SUM, comm,
                           &r),
            "MPI_Iallreduce");
      check(complete(r,
                     [&] {
                       return "the sum over " + groupName(comm) +
                              " did not complete";
                     }),
            "MPI_Iallreduce");
    } else {
      check(MPI_Allreduce(MPI_IN_PLACE, data + off, count, type, MPI_SUM, comm),
            "MPI_Allreduce");
    }
  }
  if (active)
    active->acquire();
}

void MpiComm::allReduceSum(float *data, int64_t n, Group g,
                           const Arrived &arrived) {
  sum(data, n, MPI_FLOAT, mpi(g), arrived);
}

void MpiComm::allReduceSum(double *data, int64_t n, Group g,
                           const Arrived &arrived) {
  sum(data, n, MPI_DOUBLE, mpi(g), arrived);
}

void MpiComm::allReduceMax(int64_t *data, int64_t n, Group g) {
  MPI_Comm c = mpi(g);
  if (active || timeout > 0)
    arrive(c);
  MPI_Request r;
  check(MPI_Iallreduce(MPI_IN_PLACE, data, int(n), MPI_INT64_T, MPI_MAX, c, &r),
        "MPI_Iallreduce");
  check(complete(r,
                 [&] {
                   return "the maximum over " + groupName(c) +
                          " did not complete";
                 }),
        "MPI_Iallreduce");
  if (active)
    active->acquire();
}

void MpiComm::broadcast(void *data, int64_t bytes, int root, Group g) {
  MPI_Comm c = mpi(g);
  if (active || timeout > 0)
    arrive(c);
  char *d = static_cast<char *>(data);
  for (int64_t off = 0; off < bytes; off += kPiece) {
    MPI_Request r;
    check(MPI_Ibcast(d + off, int(std::min(kPiece, bytes - off)), MPI_BYTE,
                     root, c, &r),
          "MPI_Ibcast");
    check(complete(r,
                   [&] {
                     return "a broadcast over " + groupName(c) +
                            " did not complete";
                   }),
          "MPI_Ibcast");
  }
  if (active)
    active->acquire();
}

// Sequence parallelism's collectives: one MPI call each (its chunks are
// small next to kPiece: an activation's share of the tokens). With core
// turns the members arrive first, as for every collective here.
void MpiComm::allGather(const float *mine, float *all, int64_t n, Group g) {
  MPI_Comm c = mpi(g);
  if (active || timeout > 0)
    arrive(c);
  MPI_Request r;
  check(MPI_Iallgather(mine, int(n), MPI_FLOAT, all, int(n), MPI_FLOAT, c, &r),
        "MPI_Iallgather");
  check(complete(r,
                 [&] {
                   return "an all-gather over " + groupName(c) +
                          " did not complete";
                 }),
        "MPI_Iallgather");
  if (active)
    active->acquire();
}

void MpiComm::reduceScatterSum(const float *all, float *mine, int64_t n,
                               Group g) {
  MPI_Comm c = mpi(g);
  if (active || timeout > 0)
    arrive(c);
  MPI_Request r;
  check(MPI_Ireduce_scatter_block(all, mine, int(n), MPI_FLOAT, MPI_SUM, c,
                                  &r),
        "MPI_Ireduce_scatter_block");
  check(complete(r,
                 [&] {
                   return "a reduce-scatter over " + groupName(c) +
                          " did not complete";
                 }),
        "MPI_Ireduce_scatter_block");
  if (active)
    active->acquire();
}

std::vector<int64_t> MpiComm::gather(int64_t value) {
  if (active || timeout > 0)
    arrive(MPI_COMM_WORLD);
  std::vector<int64_t> all(me == 0 ? worldSize : 0);
  MPI_Request r;
  check(MPI_Igather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0,
                    MPI_COMM_WORLD, &r),
        "MPI_Igather");
  check(complete(r, gatherWait), "MPI_Igather");
  if (active)
    active->acquire();
  return all;
}

std::vector<std::string> MpiComm::gatherBytes(const std::string &mine) {
  // Without the core: a rank holding it would keep a core-mate from
  // arriving.
  giveUpCore();
  int n = int(mine.size());
  std::vector<int> sizes(me == 0 ? worldSize : 0);
  MPI_Request r;
  check(MPI_Igather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0,
                    MPI_COMM_WORLD, &r),
        "MPI_Igather");
  check(complete(r, gatherWait), "MPI_Igather");
  std::vector<int> offsets(sizes.size(), 0);
  for (size_t r = 1; r < sizes.size(); ++r)
    offsets[r] = offsets[r - 1] + sizes[r - 1];
  std::vector<char> all(sizes.empty() ? 0 : offsets.back() + sizes.back());
  check(MPI_Igatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(),
                     offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD, &r),
        "MPI_Igatherv");
  check(complete(r, gatherWait), "MPI_Igatherv");
  std::vector<std::string> out;
  for (size_t r = 0; r < sizes.size(); ++r)
    out.emplace_back(all.data() + offsets[r], size_t(sizes[r]));
  takeBackCore();
  return out;
}

void MpiComm::barrier(Group g) {
  arrive(mpi(g));
  if (active)
    active->acquire();
}

bool MpiComm::startCoreTurns(bool wanted, int cores) {
  // Turns of an earlier start are freed first (collectively, before the new
  // ones: a rank holding a new turn inside the old window's free would keep
  // its core-mates from arriving there).
  active = nullptr;
  turns.reset();
  turns = CoreTurns::create(wanted, cores);
  active = turns.get();
  return active != nullptr;
}

void MpiComm::stopCoreTurns() {
  if (active)
    active->stop();
  active = nullptr;
}

void MpiComm::giveUpCore() {
  if (active)
    active->release(CoreTurns::now());
}

void MpiComm::takeBackCore() {
  if (active)
    active->acquire();
}

void MpiComm::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // namespace frenzy::rt
