//===- LocalHttpTest.cpp - the status page's HTTP/1.0 responder -----------===//
//
// Real sockets on 127.0.0.1 (port 0): the answers to good, wrong, too
// long and silent requests, and that a silent client holds the responder
// only for its timeout, after which the next client is answered.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Service/LocalHttp.h"

#include <arpa/inet.h>
#include <chrono>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace frenzy::service;

namespace {

int connectTo(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
  return fd;
}

/// Everything until the server closes; closes `fd`.
std::string readAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
    out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

/// Sends `request` and reads the whole reply.
std::string exchange(uint16_t port, const std::string &request) {
  int fd = connectTo(port);
  EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            ssize_t(request.size()));
  return readAll(fd);
}

class LocalHttpTest : public ::testing::Test {
protected:
  void SetUp() override {
    HttpLimits limits;
    limits.maxRequestBytes = 512;
    limits.timeoutMs = 300;
    auto s = HttpServer::listen({"127.0.0.1", 0}, limits);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    server = std::move(*s);
    ASSERT_NE(server->port(), 0);
    server->start([this](const std::string &path) {
      paths.push_back(path);
      HttpResponse r;
      if (path != "/") {
        r.status = 404;
        r.body = "no " + path;
        return r;
      }
      r.contentType = "text/html";
      r.body = "<p>hello</p>";
      return r;
    });
  }
  std::unique_ptr<HttpServer> server;
  std::vector<std::string> paths; // the server thread's; read after stop()
};

TEST_F(LocalHttpTest, AnswersGetAndHead) {
  std::string r = exchange(server->port(), "GET /?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/html\r\n"), std::string::npos);
  EXPECT_NE(r.find("Content-Length: 12\r\n"), std::string::npos);
  EXPECT_EQ(r.substr(r.size() - 12), "<p>hello</p>");
  r = exchange(server->port(), "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 200 OK\r\n", 0), 0u);
  EXPECT_EQ(r.substr(r.size() - 4), "\r\n\r\n"); // no body
  r = exchange(server->port(), "GET /nothing HTTP/1.0\n\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 404 Not Found\r\n", 0), 0u);
  server->stop();
  EXPECT_EQ(paths, (std::vector<std::string>{"/", "/", "/nothing"}));
}

TEST_F(LocalHttpTest, RefusesOtherMethodsMalformedAndLongRequests) {
  std::string r = exchange(server->port(), "POST / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 405 ", 0), 0u) << r;
  EXPECT_NE(r.find("Allow: GET, HEAD\r\n"), std::string::npos);
  r = exchange(server->port(), "hello there\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 400 ", 0), 0u) << r;
  r = exchange(server->port(),
               "GET / HTTP/1.0\r\nX: " + std::string(2000, 'a') + "\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 431 ", 0), 0u) << r;
  server->stop();
  EXPECT_TRUE(paths.empty()); // the handler saw none of them
}

TEST_F(LocalHttpTest, ASilentClientIsDroppedAfterItsTimeout) {
  auto t0 = std::chrono::steady_clock::now();
  int silent = connectTo(server->port());
  ::send(silent, "GET / HT", 8, MSG_NOSIGNAL); // and then nothing
  // Queued behind the silent one: answered once its 300 ms are up.
  std::string r = exchange(server->port(), "GET / HTTP/1.0\r\n\r\n");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           t0)
                 .count();
  EXPECT_EQ(r.rfind("HTTP/1.0 200 OK", 0), 0u) << r;
  EXPECT_GE(s, 0.25);
  EXPECT_LT(s, 30.0); // bounded: never a hang
  std::string late = readAll(silent);
  EXPECT_EQ(late.rfind("HTTP/1.0 408 ", 0), 0u) << late;
}

TEST(HttpEndpoint, LoopbackOnlyUnlessAsked) {
  auto a = parseHttpEndpoint("127.0.0.1:0", false);
  ASSERT_TRUE(bool(a));
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 0);
  auto l = parseHttpEndpoint("localhost:8080", false);
  ASSERT_TRUE(bool(l));
  EXPECT_EQ(l->host, "127.0.0.1");
  EXPECT_EQ(l->port, 8080);
  auto any = parseHttpEndpoint("0.0.0.0:8080", false);
  ASSERT_FALSE(bool(any));
  EXPECT_NE(llvm::toString(any.takeError()).find("not a loopback address"),
            std::string::npos);
  EXPECT_TRUE(bool(parseHttpEndpoint("0.0.0.0:8080", true)));
  for (const char *bad : {"8080", "127.0.0.1:99999", "127.0.0.1:x",
                          "example.org:80"}) {
    auto e = parseHttpEndpoint(bad, true);
    ASSERT_FALSE(bool(e)) << bad;
    EXPECT_EQ(llvm::toString(e.takeError()).find("--http="), 0u);
  }
}

} // namespace
