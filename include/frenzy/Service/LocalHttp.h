//===- LocalHttp.h - a small GET-only HTTP/1.0 responder --------*- C++ -*-===//
//
// The scheduler service's status page travels over plain HTTP/1.0 on a
// loopback address: one request per connection, GET and HEAD only, the
// request line and headers bounded in size and in time (a slow or silent
// client is answered 408 and dropped, a long one 431), the reply written
// under the same deadline. Connections are served one at a time on the
// responder's own thread, so no client can stall the caller's loop.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SERVICE_LOCALHTTP_H
#define FRENZY_SERVICE_LOCALHTTP_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace frenzy::service {

struct HttpEndpoint {
  std::string host; // dotted IPv4
  uint16_t port = 0; // 0: the kernel picks one
};

/// "HOST:PORT" ("localhost" is 127.0.0.1). A non-loopback HOST is refused
/// unless `allowRemote`: the page has no authentication.
llvm::Expected<HttpEndpoint> parseHttpEndpoint(llvm::StringRef spec,
                                               bool allowRemote);

struct HttpResponse {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpLimits {
  size_t maxRequestBytes = 8192; // request line and headers
  int timeoutMs = 2000;          // to read the request, then to write the reply
};

/// What a GET of `path` (without its query) answers.
using HttpHandler = std::function<HttpResponse(const std::string &path)>;

/// Reads one request from the connected socket `fd` and answers it within
/// `limits` (the caller closes `fd`). Returns the status sent.
int serveHttpConnection(int fd, const HttpHandler &handler,
                        const HttpLimits &limits);

class HttpServer {
public:
  /// Binds and listens (errors name the address and say what to do).
  static llvm::Expected<std::unique_ptr<HttpServer>>
  listen(const HttpEndpoint &at, HttpLimits limits = {});
  ~HttpServer();
  /// The bound port (the kernel's pick for port 0).
  uint16_t port() const { return boundPort; }
  /// Answers connections with `handler` on a new thread until stop().
  void start(HttpHandler handler);
  void stop();

private:
  HttpServer(int fd, int wake[2], uint16_t port, HttpLimits limits);
  void run();
  int listenFd;
  int wakeRead, wakeWrite; // a byte here ends run()
  uint16_t boundPort;
  HttpLimits limits;
  HttpHandler handler;
  std::thread thread;
};

} // namespace frenzy::service

#endif
