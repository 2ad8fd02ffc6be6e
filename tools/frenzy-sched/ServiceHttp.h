//===- ServiceHttp.h - serve --http: the status page over HTTP --*- C++ -*-===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_SERVICEHTTP_H
#define FRENZY_TOOLS_FRENZY_SCHED_SERVICEHTTP_H

#include "Service.h"
#include "StatusPage.h"

#include "frenzy/Service/LocalHttp.h"

namespace frenzy::sched {

/// The status page (GET / and /status.json) on its own thread, reading the
/// queue through its own database connection: the service loop never
/// waits for an HTTP client, and the page never waits for the loop.
class StatusHttp {
public:
  /// Listens on `o.http` and writes the bound port to STATE/http.port.
  static llvm::Expected<std::unique_ptr<StatusHttp>>
  start(const ServeOptions &o, const SchedCluster &cluster);
  ~StatusHttp(); // stops the thread, removes STATE/http.port
  uint16_t port() const { return server->port(); }
  std::string url() const;

private:
  StatusHttp(const ServeOptions &o, const SchedCluster &c,
             std::unique_ptr<service::JobStore> store)
      : cluster(c), store(std::move(store)),
        page(cluster, o.statusWindowS),
        portFile(o.stateDir + "/http.port") {}
  service::HttpResponse answer(const std::string &path);
  SchedCluster cluster; // a copy: the service's own is not shared
  std::unique_ptr<service::JobStore> store;
  StatusPage page;
  std::string host, portFile;
  std::unique_ptr<service::HttpServer> server;
};

} // namespace frenzy::sched

#endif
