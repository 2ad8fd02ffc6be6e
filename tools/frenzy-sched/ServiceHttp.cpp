//===- ServiceHttp.cpp - serve --http: the status page over HTTP ----------===//
//
// Opt-in (`serve --http=127.0.0.1:PORT`): the page shows every user's
// jobs, so it binds to loopback unless --http-allow-remote. The chosen
// port (port 0 lets the kernel pick) is written to STATE/http.port by
// rename, so a reader sees a whole number or none. The same document is
// also a request on the Unix socket ({"op":"page"}, `frenzy-sched status
// --page`), answered by Service::page below.
//
//===----------------------------------------------------------------------===//
#include "ServiceHttp.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;
namespace json = llvm::json;

static double wallNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

llvm::Expected<std::unique_ptr<StatusHttp>>
StatusHttp::start(const ServeOptions &o, const SchedCluster &cluster) {
  auto at = parseHttpEndpoint(o.http, o.httpAllowRemote);
  if (!at)
    return at.takeError();
  auto store = JobStore::open(o.stateDir + "/queue.db", o.dbTimeoutMs);
  if (!store)
    return store.takeError();
  std::unique_ptr<StatusHttp> s(
      new StatusHttp(o, cluster, std::move(*store)));
  HttpLimits limits;
  limits.timeoutMs = o.httpTimeoutMs;
  auto server = HttpServer::listen(*at, limits);
  if (!server)
    return server.takeError();
  s->server = std::move(*server);
  s->host = at->host;
  std::string tmp = s->portFile + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return llvm::createStringError(ec, "%s: cannot write: %s", tmp.c_str(),
                                     ec.message().c_str());
    os << s->port() << "\n";
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, s->portFile))
    return llvm::createStringError(ec, "%s: cannot write: %s",
                                   s->portFile.c_str(), ec.message().c_str());
  StatusHttp *self = s.get();
  s->server->start(
      [self](const std::string &path) { return self->answer(path); });
  return std::move(s);
}

StatusHttp::~StatusHttp() {
  if (server)
    server->stop();
  llvm::sys::fs::remove(portFile);
}

std::string StatusHttp::url() const {
  return "http://" + host + ":" + std::to_string(port()) + "/";
}

HttpResponse StatusHttp::answer(const std::string &path) {
  HttpResponse r;
  if (path != "/" && path != "/index.html" && path != "/status.json") {
    r.status = 404;
    r.body = path + ": no such page; the status page is / and its data "
                    "/status.json\n";
    return r;
  }
  auto doc = page.snapshot(*store, wallNow());
  if (!doc) {
    // The database is busy past --db-timeout or damaged: say so, the
    // service loop reports it on its side.
    r.status = 500;
    r.body = llvm::toString(doc.takeError()) + "\n";
    return r;
  }
  if (path == "/status.json") {
    r.contentType = "application/json";
    llvm::raw_string_ostream os(r.body);
    os << json::Value(std::move(*doc)) << "\n";
  } else {
    r.contentType = "text/html; charset=utf-8";
    r.body = renderStatusHtml(*doc);
  }
  return r;
}

json::Object Service::page(double now) {
  StatusPage p(cluster, o.statusWindowS);
  auto doc = p.snapshot(*store, now);
  if (!doc)
    return json::Object{{"ok", false},
                        {"error", llvm::toString(doc.takeError())}};
  return json::Object{{"ok", true}, {"page", std::move(*doc)}};
}
