//===- TraceGather.cpp - one trace from every rank ------------------------===//
#include "TraceGather.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unistd.h>

namespace frenzy::rt {

static constexpr int kPings = 16;

double alignTraceClock(Comm &comm, Trace &t) {
  // A private communicator: no message of the plan can match these.
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  // Rank 0's host and its trace origin on the machine's monotonic clock
  // (steady_clock is CLOCK_MONOTONIC, shared by the host's processes).
  struct {
    char host[256];
    double originUs;
  } root{}, here{};
  ::gethostname(here.host, sizeof here.host - 1);
  here.originUs = std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count() -
                  t.now();
  root = here;
  MPI_Bcast(&root, sizeof root, MPI_BYTE, 0, c);
  double bestRtt = 0;
  if (comm.rank() == 0) {
    for (int r = 1; r < comm.size(); ++r)
      for (int k = 0; k < kPings; ++k) {
        char ping;
        MPI_Recv(&ping, 1, MPI_CHAR, r, 0, c, MPI_STATUS_IGNORE);
        double mine = t.now();
        MPI_Send(&mine, 1, MPI_DOUBLE, r, 1, c);
      }
    t.setOffset(0);
  } else {
    double offset = 0;
    bestRtt = 1e300;
    for (int k = 0; k < kPings; ++k) {
      char ping = 0;
      double sent = t.now(), theirs = 0;
      MPI_Send(&ping, 1, MPI_CHAR, 0, 0, c);
      MPI_Recv(&theirs, 1, MPI_DOUBLE, 0, 1, c, MPI_STATUS_IGNORE);
      double back = t.now();
      if (back - sent < bestRtt) {
        bestRtt = back - sent;
        offset = theirs - 0.5 * (sent + back);
      }
    }
    if (std::strcmp(root.host, here.host) == 0)
      offset = here.originUs - root.originUs;
    t.setOffset(offset);
  }
  MPI_Comm_free(&c);
  return bestRtt;
}

std::vector<std::string> gatherTrace(Comm &comm, const std::string &mine) {
  // Raw MPI: a rank holding its core would keep a core-mate from arriving.
  comm.giveUpCore();
  int n = int(mine.size());
  std::vector<int> sizes(comm.rank() == 0 ? comm.size() : 0);
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(sizes.size(), 0);
  for (size_t r = 1; r < sizes.size(); ++r)
    offsets[r] = offsets[r - 1] + sizes[r - 1];
  std::vector<char> all(sizes.empty() ? 0 : offsets.back() + sizes.back());
  MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(),
              offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (size_t r = 0; r < sizes.size(); ++r)
    out.emplace_back(all.data() + offsets[r], size_t(sizes[r]));
  comm.takeBackCore();
  return out;
}

} // namespace frenzy::rt
