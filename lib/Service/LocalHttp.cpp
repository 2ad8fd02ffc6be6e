//===- LocalHttp.cpp - a small GET-only HTTP/1.0 responder ----------------===//
//
// Every read and write of a connection waits with poll() against one
// deadline per phase, so the whole connection costs at most twice the
// timeout however the client behaves (a byte a second, nothing at all, or
// never reading the reply). The listener and a wake-up pipe are polled
// together: stop() returns promptly without closing a socket under a
// blocked call.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Service/LocalHttp.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace frenzy::service;

llvm::Expected<HttpEndpoint>
frenzy::service::parseHttpEndpoint(llvm::StringRef spec, bool allowRemote) {
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "--http=%s: %s", spec.str().c_str(),
                                   why.str().c_str());
  };
  size_t colon = spec.rfind(':');
  if (colon == llvm::StringRef::npos)
    return bad("expected HOST:PORT, e.g. 127.0.0.1:8080 (port 0 picks a "
               "free one)");
  HttpEndpoint e;
  e.host = spec.take_front(colon).str();
  unsigned port;
  if (spec.drop_front(colon + 1).getAsInteger(10, port) || port > 65535)
    return bad("the port must be 0-65535");
  e.port = uint16_t(port);
  if (e.host == "localhost")
    e.host = "127.0.0.1";
  in_addr a;
  if (::inet_pton(AF_INET, e.host.c_str(), &a) != 1)
    return bad("'" + e.host + "' is not an IPv4 address");
  bool loopback = (ntohl(a.s_addr) >> 24) == 127;
  if (!loopback && !allowRemote)
    return bad("'" + e.host + "' is not a loopback address; the status page "
               "has no authentication, so give 127.0.0.1 (or add "
               "--http-allow-remote to expose it)");
  return e;
}

namespace {

using Clock = std::chrono::steady_clock;

int msLeft(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - Clock::now())
                .count();
  return ms > 0 ? int(ms) : 0;
}

const char *reasonOf(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 400:
    return "Bad Request";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 408:
    return "Request Timeout";
  case 431:
    return "Request Header Fields Too Large";
  default:
    return "Internal Server Error";
  }
}

/// The reply gets its own timeout, after the request's.
Clock::time_point writeDeadline(const HttpLimits &l) {
  return Clock::now() + std::chrono::milliseconds(l.timeoutMs);
}

/// Writes all of `data` before `deadline`; false when the client stalls.
bool writeAll(int fd, llvm::StringRef data, Clock::time_point deadline) {
  while (!data.empty()) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, msLeft(deadline)) <= 0)
      return false;
    ssize_t n = ::send(fd, data.data(), data.size(),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return false;
    if (n > 0)
      data = data.drop_front(size_t(n));
  }
  return true;
}

int reply(int fd, const HttpResponse &r, bool withBody, const char *extra,
          Clock::time_point deadline) {
  std::string head = llvm::formatv(
      "HTTP/1.0 {0} {1}\r\nContent-Type: {2}\r\nContent-Length: {3}\r\n"
      "Cache-Control: no-store\r\nConnection: close\r\n{4}\r\n",
      r.status, reasonOf(r.status), r.contentType, r.body.size(), extra);
  if (writeAll(fd, head, deadline) && withBody)
    writeAll(fd, r.body, deadline);
  return r.status;
}

int replyError(int fd, int status, const std::string &why,
               Clock::time_point deadline, const char *extra = "") {
  HttpResponse r;
  r.status = status;
  r.body = why + "\n";
  return reply(fd, r, true, extra, deadline);
}

} // namespace

int frenzy::service::serveHttpConnection(int fd, const HttpHandler &handler,
                                         const HttpLimits &limits) {
  auto deadline = writeDeadline(limits); // the same span, for reading
  std::string req;
  size_t end = std::string::npos;
  char buf[1024];
  while ((end = req.find("\r\n\r\n")) == std::string::npos &&
         (end = req.find("\n\n")) == std::string::npos) {
    if (req.size() >= limits.maxRequestBytes)
      return replyError(fd, 431,
                        "request over " +
                            std::to_string(limits.maxRequestBytes) + " bytes",
                        writeDeadline(limits));
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, msLeft(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    ssize_t n = ready > 0 ? ::recv(fd, buf, sizeof buf, MSG_DONTWAIT) : -1;
    if (n < 0 && ready > 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (ready == 0)
      return replyError(fd, 408,
                        "no complete request within " +
                            std::to_string(limits.timeoutMs) + " ms",
                        writeDeadline(limits));
    if (n <= 0) // closed or reset: nobody to answer
      return 0;
    req.append(buf, size_t(n)); // at most one buffer past the bound
  }
  auto writeBy = writeDeadline(limits);
  llvm::StringRef line = llvm::StringRef(req).take_front(end);
  line = line.take_until([](char c) { return c == '\r' || c == '\n'; });
  llvm::SmallVector<llvm::StringRef, 3> words;
  line.split(words, ' ', -1, false);
  if (words.size() != 3 || !words[2].starts_with("HTTP/1.") ||
      !words[1].starts_with("/"))
    return replyError(fd, 400, "expected 'GET /PATH HTTP/1.x'", writeBy);
  if (words[0] != "GET" && words[0] != "HEAD")
    return replyError(fd, 405, "only GET and HEAD", writeBy,
                      "Allow: GET, HEAD\r\n");
  std::string path = words[1].take_until([](char c) {
                               return c == '?' || c == '#';
                             }).str();
  return reply(fd, handler(path), words[0] == "GET", "", writeBy);
}

/// Closing with unread request bytes would reset the connection and could
/// destroy the reply in flight (a refused long request): end our side,
/// then read what the client still sends, bounded in bytes and time.
static void closeGracefully(int fd, const HttpLimits &limits) {
  ::shutdown(fd, SHUT_WR);
  auto deadline = writeDeadline(limits);
  char buf[4096];
  for (size_t total = 0; total < 16 * limits.maxRequestBytes;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, msLeft(deadline)) <= 0)
      break;
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR)))
      break;
    total += n > 0 ? size_t(n) : 0;
  }
  ::close(fd);
}

llvm::Expected<std::unique_ptr<HttpServer>>
HttpServer::listen(const HttpEndpoint &at, HttpLimits limits) {
  std::string where = at.host + ":" + std::to_string(at.port);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return llvm::createStringError(std::errc::io_error,
                                   "cannot create a TCP socket: %s",
                                   std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(at.port);
  ::inet_pton(AF_INET, at.host.c_str(), &a.sin_addr);
  socklen_t len = sizeof a;
  int wake[2];
  if (::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
      ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0 ||
      ::pipe2(wake, O_CLOEXEC) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return llvm::createStringError(
        std::errc::io_error,
        "--http=%s: cannot listen: %s (give another port, or 0 for any "
        "free one)",
        where.c_str(), why.c_str());
  }
  return std::unique_ptr<HttpServer>(
      new HttpServer(fd, wake, ntohs(a.sin_port), limits));
}

HttpServer::HttpServer(int fd, int wake[2], uint16_t port, HttpLimits limits)
    : listenFd(fd), wakeRead(wake[0]), wakeWrite(wake[1]), boundPort(port),
      limits(limits) {}

HttpServer::~HttpServer() {
  stop();
  ::close(listenFd);
  ::close(wakeRead);
  ::close(wakeWrite);
}

void HttpServer::start(HttpHandler h) {
  handler = std::move(h);
  thread = std::thread([this] { run(); });
}

void HttpServer::stop() {
  if (!thread.joinable())
    return;
  char b = 0;
  while (::write(wakeWrite, &b, 1) < 0 && errno == EINTR) {
  }
  thread.join();
}

void HttpServer::run() {
  for (;;) {
    pollfd p[2] = {{listenFd, POLLIN, 0}, {wakeRead, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    if (p[1].revents)
      return;
    if (!(p[0].revents & POLLIN))
      continue;
    int c = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    serveHttpConnection(c, handler, limits);
    closeGracefully(c, limits);
  }
}
