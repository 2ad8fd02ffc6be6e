//===- Comm.cpp - the MPI the runtime uses --------------------------------===//
#include "Comm.h"

#include "Tensor.h"

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
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

Comm::Comm(int *argc, char ***argv) {
  check(MPI_Init(argc, argv), "MPI_Init");
  // Errors come back as codes, so a rank can say what failed before the
  // job is ended.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
}

Comm::~Comm() {
  for (MPI_Comm &c : groups)
    if (c != MPI_COMM_NULL)
      MPI_Comm_free(&c);
  MPI_Finalize();
}

bool Comm::launchedByMpi() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                        "PMI_RANK", "SLURM_PROCID"})
    if (std::getenv(v))
      return true;
  return false;
}

void Comm::send(const void *data, int64_t bytes, int peer, int tag) {
  Pending &p = pending.emplace_back();
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
}

void Comm::recv(void *data, int64_t bytes, int peer, int tag) {
  char *d = static_cast<char *>(data);
  for (int64_t off = 0; off < bytes || off == 0; off += kPiece) {
    int n = int(std::min(kPiece, bytes - off));
    MPI_Status st;
    check(MPI_Recv(d + off, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st),
          "MPI_Recv");
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
}

void Comm::probe(int peer, int tag, double napUntil) {
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

void Comm::probe(int peer, int tag) {
  check(MPI_Probe(peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Probe");
}

bool Comm::arrived(int peer, int tag) {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
  return flag != 0;
}

void Comm::waitSends() {
  for (Pending &p : pending) {
    check(MPI_Waitall(int(p.requests.size()), p.requests.data(),
                      MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    if (spare.size() < 256)
      spare.push_back(std::move(p.data));
  }
  pending.clear();
}

MPI_Comm Comm::group(const std::vector<int32_t> &ranks, int tag) {
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
  return c;
}

void Comm::allReduceSum(float *data, int64_t n, MPI_Comm comm) {
  for (int64_t off = 0; off < n; off += kPiece / 4)
    check(MPI_Allreduce(MPI_IN_PLACE, data + off,
                        int(std::min(kPiece / 4, n - off)), MPI_FLOAT, MPI_SUM,
                        comm),
          "MPI_Allreduce");
}

void Comm::allReduceSum(double *data, int n) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, n, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void Comm::allReduceMax(int64_t *data, int n) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, n, MPI_INT64_T, MPI_MAX,
                      MPI_COMM_WORLD),
        "MPI_Allreduce");
}

std::vector<int64_t> Comm::gather(int64_t value) {
  std::vector<int64_t> all(me == 0 ? worldSize : 0);
  check(MPI_Gather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0,
                   MPI_COMM_WORLD),
        "MPI_Gather");
  return all;
}

void Comm::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void Comm::barrier(MPI_Comm c) { check(MPI_Barrier(c), "MPI_Barrier"); }

void Comm::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // namespace frenzy::rt
