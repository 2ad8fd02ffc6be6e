//===- ProbeBack.cpp - each node proves it can reach the launcher before mpirun starts -===//
//
// Open MPI's remote daemons retry calling back forever when a node cannot
// reach the launching machine (a link down, a firewall): orte_startup_timeout
// does not end that wait, no rank starts anywhere until every daemon has
// called back, and nothing names the node. So before mpirun the launcher
// listens on a TCP port and runs, on every node through the launch agent,
// `frenzy-launch --launch-probe=ADDR/PORT,...` (its addresses as routed
// towards each node's host), which connects back and exits 0, or exits
// kProbeUnreachable. The same agent, binary and direction of connection as
// the daemons': a node that passes starts its daemon.
//
//===----------------------------------------------------------------------===//
#include "ProbeBack.h"

#include "Tensor.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <poll.h>
#include <set>
#include <sys/socket.h>
#include <unistd.h>

namespace frenzy::rt {

namespace {

/// A TCP connection to host/port within `ms`, or -1.
int connectWithin(const std::string &host, const std::string &port, int ms) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0)
    return -1;
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    fcntl(fd, F_SETFL, O_NONBLOCK);
    int rc = connect(fd, res->ai_addr, res->ai_addrlen);
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (!(rc == 0 || (errno == EINPROGRESS && poll(&p, 1, ms) == 1 &&
                      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
                      err == 0))) {
      close(fd);
      fd = -1;
    } else {
      fcntl(fd, F_SETFL, 0);
    }
  }
  freeaddrinfo(res);
  return fd;
}

std::string addressText(const sockaddr_storage &a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(a).sin_addr, buf,
              sizeof buf);
  else
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr,
              buf, sizeof buf);
  return buf;
}

} // namespace

int probeBack(const std::string &spec) {
  // ADDR/PORT,ADDR/PORT...: the first address that answers gets it.
  std::string message = "frenzy-launch probe\n";
  const std::string &rest = spec;
  for (size_t pos = 0; pos <= rest.size();) {
    size_t end = rest.find(',', pos);
    if (end == std::string::npos)
      end = rest.size();
    std::string item = rest.substr(pos, end - pos);
    pos = end + 1;
    size_t slash = item.rfind('/');
    if (slash == std::string::npos)
      continue;
    int fd = connectWithin(item.substr(0, slash), item.substr(slash + 1), 2000);
    if (fd < 0)
      continue;
    bool sent = write(fd, message.data(), message.size()) ==
                ssize_t(message.size());
    close(fd);
    if (sent)
      return 0;
  }
  return kProbeUnreachable;
}

ProbeListener::ProbeListener(const plan::Plan &p) {
  // IPv6 and IPv4 on one socket; IPv4 alone where the kernel has no IPv6.
  fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 any6{};
  any6.sin6_family = AF_INET6;
  any6.sin6_addr = in6addr_any;
  int off = 0;
  bool ok = fd >= 0 &&
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) == 0 &&
            bind(fd, reinterpret_cast<sockaddr *>(&any6), sizeof any6) == 0;
  if (!ok) {
    if (fd >= 0)
      close(fd);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in any4{};
    any4.sin_family = AF_INET;
    any4.sin_addr.s_addr = htonl(INADDR_ANY);
    ok = fd >= 0 &&
         bind(fd, reinterpret_cast<sockaddr *>(&any4), sizeof any4) == 0;
  }
  if (!ok || listen(fd, 1024) != 0)
    throw RuntimeError(std::string("cannot listen for the nodes' probes: ") +
                       std::strerror(errno));
  sockaddr_storage me{};
  socklen_t len = sizeof me;
  getsockname(fd, reinterpret_cast<sockaddr *>(&me), &len);
  std::string port = std::to_string(
      ntohs(me.ss_family == AF_INET6
                ? reinterpret_cast<sockaddr_in6 &>(me).sin6_port
                : reinterpret_cast<sockaddr_in &>(me).sin_port));
  // This machine's address on the route to each host: what that node
  // reaches it at (the kernel chooses; nothing is sent).
  std::set<std::string> seen;
  std::string list;
  bool unresolved = false;
  for (const plan::NodeHost &n : p.nodes()) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_DGRAM;
    if (n.host().empty())
      continue;
    if (getaddrinfo(n.host().c_str(), "9", &hints, &res) != 0) {
      unresolved = true;
      continue;
    }
    int u = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_storage local{};
    socklen_t ll = sizeof local;
    if (u >= 0 && connect(u, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(u, reinterpret_cast<sockaddr *>(&local), &ll) == 0) {
      std::string a = addressText(local);
      if (seen.insert(a).second)
        list += (list.empty() ? "" : ",") + a + "/" + port;
    } else {
      unresolved = true; // no route from here: let the probe try them all
    }
    if (u >= 0)
      close(u);
    freeaddrinfo(res);
  }
  // Hosts this machine cannot resolve (an ssh alias, say) or route to:
  // every address of its own, for the probe to try in turn.
  if (unresolved) {
    ifaddrs *all = nullptr;
    if (getifaddrs(&all) == 0) {
      for (ifaddrs *a = all; a; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
          continue;
        sockaddr_storage st{};
        std::memcpy(&st, a->ifa_addr, sizeof(sockaddr_in));
        std::string text = addressText(st);
        if (text.rfind("127.", 0) != 0 && seen.insert(text).second)
          list += (list.empty() ? "" : ",") + text + "/" + port;
      }
      freeifaddrs(all);
    }
  }
  addresses = list;
  argument = "--launch-probe=" + list;
}

ProbeListener::~ProbeListener() {
  if (fd >= 0)
    close(fd);
}

} // namespace frenzy::rt
