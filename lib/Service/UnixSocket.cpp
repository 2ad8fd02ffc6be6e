//===- UnixSocket.cpp - the service's socket: lines, peers, fds -----------===//
//
// Blocking sockets with poll()-bounded reads: a client that connects and
// says nothing costs the service at most the timeout, never a hang.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Service/UnixSocket.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace frenzy::service;

static llvm::Error sysError(const llvm::Twine &what) {
  return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                 what + ": " + std::strerror(errno));
}

static llvm::Expected<sockaddr_un> address(const std::string &path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    return llvm::createStringError(
        std::errc::filename_too_long,
        "%s: a socket path may have at most %zu bytes; choose a shorter "
        "--socket",
        path.c_str(), sizeof a.sun_path - 1);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

llvm::Expected<int> frenzy::service::connectUnix(const std::string &path) {
  auto a = address(path);
  if (!a)
    return a.takeError();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sysError("socket");
  if (::connect(fd, reinterpret_cast<sockaddr *>(&*a), sizeof *a) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return sysError(path + ": cannot connect to frenzy-sched serve" +
                    (e == ENOENT || e == ECONNREFUSED
                         ? " (is it running? give its --socket)"
                         : e == EACCES ? " (the socket's permissions do "
                                         "not let this user submit)"
                                       : ""));
  }
  return fd;
}

llvm::Expected<int> frenzy::service::listenUnix(const std::string &path,
                                                unsigned mode) {
  auto a = address(path);
  if (!a)
    return a.takeError();
  // A socket file left by a killed service is stale when nobody answers.
  if (auto probe = connectUnix(path)) {
    ::close(*probe);
    return llvm::createStringError(
        std::errc::address_in_use,
        "%s: another frenzy-sched serve answers on this socket; stop it "
        "first or choose another --socket",
        path.c_str());
  } else {
    llvm::consumeError(probe.takeError());
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return llvm::createStringError(std::errc::file_exists,
                                     "%s: exists and is not a socket; "
                                     "choose another --socket",
                                     path.c_str());
    ::unlink(path.c_str());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sysError("socket");
  // Created with no permissions, then opened to `mode`: no window in which
  // anyone else may connect.
  mode_t old = ::umask(0777);
  int rc = ::bind(fd, reinterpret_cast<sockaddr *>(&*a), sizeof *a);
  ::umask(old);
  if (rc != 0 || ::chmod(path.c_str(), mode) != 0 || ::listen(fd, 64) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return sysError(path + ": cannot listen");
  }
  return fd;
}

llvm::Expected<unsigned> frenzy::service::peerUid(int fd) {
  ucred c{};
  socklen_t n = sizeof c;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0)
    return sysError("SO_PEERCRED");
  return unsigned(c.uid);
}

llvm::Error frenzy::service::sendLine(int fd, const std::string &line,
                                      const std::vector<int> &fds) {
  std::string buf = line + "\n";
  size_t sent = 0;
  while (sent < buf.size()) {
    iovec iov{buf.data() + sent, buf.size() - sent};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    std::vector<char> control;
    if (sent == 0 && !fds.empty()) {
      control.assign(CMSG_SPACE(sizeof(int) * fds.size()), 0);
      m.msg_control = control.data();
      m.msg_controllen = control.size();
      cmsghdr *c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return sysError("cannot send to the socket");
    }
    sent += size_t(n);
  }
  return llvm::Error::success();
}

llvm::Error frenzy::service::recvLine(int fd, std::string &line,
                                      std::vector<int> &fds, int timeoutMs,
                                      size_t maxBytes) {
  line.clear();
  char buf[4096];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, timeoutMs);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return sysError("poll");
    if (r == 0)
      return llvm::createStringError(std::errc::timed_out,
                                     "no complete message within %d ms",
                                     timeoutMs);
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return sysError("cannot read from the socket");
    for (cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; ++i) {
          int f;
          std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
          fds.push_back(f);
        }
      }
    if (n == 0)
      return llvm::createStringError(std::errc::connection_reset,
                                     "the other side closed the connection "
                                     "before a complete message");
    line.append(buf, size_t(n));
    size_t nl = line.find('\n');
    if (nl != std::string::npos) {
      line.resize(nl);
      return llvm::Error::success();
    }
    if (line.size() > maxBytes)
      return llvm::createStringError(std::errc::message_size,
                                     "message longer than %zu bytes",
                                     maxBytes);
  }
}
