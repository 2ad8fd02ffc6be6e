//===- TraceGather.cpp - one trace from every rank ------------------------===//
#include "TraceGather.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unistd.h>

namespace frenzy::rt {

static constexpr int kPings = 16;
// Tags above every tensor id of a plan: no message of the plan matches.
static constexpr int kPingTag = 1 << 29, kPongTag = kPingTag + 1;

double alignTraceClock(Comm &comm, Trace &t) {
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
  comm.broadcast(&root, sizeof root, 0, Group::world());
  double bestRtt = 0;
  if (comm.rank() == 0) {
    for (int r = 1; r < comm.size(); ++r)
      for (int k = 0; k < kPings; ++k) {
        char ping;
        comm.recv(&ping, 1, r, kPingTag);
        double mine = t.now();
        comm.isend(&mine, sizeof mine, r, kPongTag)->wait();
      }
    t.setOffset(0);
  } else {
    double offset = 0;
    bestRtt = 1e300;
    for (int k = 0; k < kPings; ++k) {
      char ping = 0;
      double sent = t.now(), theirs = 0;
      comm.isend(&ping, 1, 0, kPingTag)->wait();
      comm.recv(&theirs, sizeof theirs, 0, kPongTag);
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
  return bestRtt;
}

std::vector<std::string> gatherTrace(Comm &comm, const std::string &mine) {
  return comm.gatherBytes(mine);
}

} // namespace frenzy::rt
