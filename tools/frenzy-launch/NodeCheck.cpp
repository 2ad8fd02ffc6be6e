//===- NodeCheck.cpp - a rank refuses to run anywhere but on its plan node -===//
//
// Under mpirun or srun, MPI rank r becomes plan rank r whatever host the
// launcher put it on. A hostfile out of plan order, or an allocation that
// differs from the plan's nodes, would still run, silently, with the plan's
// links and memory priced for other machines. Every rank compares where it
// is with its node's host before it talks to a peer.
//
//===----------------------------------------------------------------------===//
#include "HostLaunch.h"

#include "Tensor.h"

#include <arpa/inet.h>
#include <cstdlib>
#include <cstring>
#include <ifaddrs.h>
#include <netdb.h>
#include <set>
#include <unistd.h>

namespace frenzy::rt {

namespace {

std::string shortName(const std::string &h) { return h.substr(0, h.find('.')); }

/// This machine's IPv4 and IPv6 interface addresses, as text.
std::set<std::string> localAddresses() {
  std::set<std::string> out;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0)
    return out;
  for (ifaddrs *a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr)
      continue;
    char buf[INET6_ADDRSTRLEN] = {};
    int family = a->ifa_addr->sa_family;
    if (family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(a->ifa_addr)->sin_addr,
                buf, sizeof buf);
    else if (family == AF_INET6)
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6 *>(a->ifa_addr)->sin6_addr, buf,
                sizeof buf);
    else
      continue;
    out.insert(buf);
  }
  freeifaddrs(list);
  return out;
}

/// The addresses `host` names: itself when it is one, else what the
/// resolver says (a name that does not resolve names none).
std::set<std::string> addressesOf(const std::string &host) {
  std::set<std::string> out;
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0)
    return out;
  for (addrinfo *a = res; a; a = a->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(a->ai_addr)->sin_addr,
                buf, sizeof buf);
    else if (a->ai_family == AF_INET6)
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6 *>(a->ai_addr)->sin6_addr, buf,
                sizeof buf);
    else
      continue;
    out.insert(buf);
  }
  freeaddrinfo(res);
  return out;
}

} // namespace

void checkOnPlanNode(const plan::Plan &p) {
  int rank = -1;
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                        "SLURM_PROCID"})
    if (const char *s = std::getenv(v); s && rank < 0)
      rank = std::atoi(s);
  if (rank < 0 || rank >= p.ranks_size())
    return; // the rank count is checked where the ranks meet
  const std::string &node = p.ranks(rank).node();
  std::string host = hostOfNode(p, node);
  if (host.empty())
    return;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string self = name;
  if (self == host || shortName(self) == shortName(host))
    return;
  // A loopback host is every machine: it says nothing about where a rank is.
  std::set<std::string> mine = localAddresses();
  for (const std::string &a : addressesOf(host))
    if (mine.count(a) && a != "127.0.0.1" && a != "::1")
      return;
  std::string where;
  for (const std::string &a : mine)
    if (a != "127.0.0.1" && a != "::1" && a.rfind("fe80", 0) != 0)
      where += (where.empty() ? "" : ", ") + a;
  // Under srun (SLURM_STEP_ID: a step's task, not the batch script) the
  // fix is in the allocation or the task order, not in how it was started.
  const char *slurmNode = std::getenv("SLURMD_NODENAME");
  bool srun = std::getenv("SLURM_STEP_ID") && slurmNode;
  throw RuntimeError(
      "rank " + std::to_string(rank) + " is not on its plan node '" + node +
      "' (host " + host + "): it runs on host '" + self + "' (" +
      (where.empty() ? "no address" : where) +
      (srun ? std::string(", Slurm node '") + slurmNode + "'" : "") + "); " +
      (srun ? "the Slurm allocation's nodes and task order must be the "
              "plan's (the script frenzy-sched --out-dir writes for it)"
            : "start the ranks in plan order on the plan's hosts "
              "(frenzy-launch PLAN does)"));
}

} // namespace frenzy::rt
