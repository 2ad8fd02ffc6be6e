//===- ServeMain.cpp - `frenzy-sched serve`: setup and the event loop -----===//
//
// Startup order matters for recovery: take the state directory's lock (one
// service per queue), open and check the database, reconcile every
// recorded allocation with what really runs, sweep job directories no row
// names (a submission cut short), and only then listen. The loop polls the
// socket with a short timeout and reconciles on every turn, so a job's end
// is noticed within that period whether or not this instance started it.
//
//===----------------------------------------------------------------------===//
#include "ServeArgs.h"
#include "Service.h"
#include "ServiceHttp.h"

#include "frenzy/Service/UnixSocket.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <set>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;

static volatile sig_atomic_t stopRequested = 0;
static void onStop(int) { stopRequested = 1; }

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "frenzy-sched serve: error: " << msg << "\n";
  return 1;
}

static double wallNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Removes job directories that no job row names (a submission the
/// service was killed in the middle of).
static void sweepJobDirs(const std::string &jobsDir,
                         const std::vector<JobRow> &jobs) {
  std::set<std::string> known;
  for (const JobRow &j : jobs)
    known.insert(j.dir);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(jobsDir, ec), end; !ec && it != end;
       it.increment(ec))
    if (!known.count(it->path()))
      llvm::sys::fs::remove_directories(it->path());
}

int frenzy::sched::serveMain(llvm::ArrayRef<const char *> args,
                             const char *argv0) {
  ServeOptions o;
  std::string err;
  if (!parseServeArgs(args, argv0, o, err))
    return fail(err);
  auto spec = readClusterFile(o.clusterFile);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  auto cluster = SchedCluster::build(*spec);
  if (!cluster)
    return fail(o.clusterFile + ": " + llvm::toString(cluster.takeError()));
  for (const char *sub : {"", "/jobs", "/options"})
    if (std::error_code ec = llvm::sys::fs::create_directories(
            o.stateDir + sub, true, llvm::sys::fs::perms(0711)))
      return fail(o.stateDir + sub + ": cannot create: " + ec.message());
  // Users reach their own job directories (0700) through these.
  ::chmod(o.stateDir.c_str(), 0711);
  ::chmod((o.stateDir + "/jobs").c_str(), 0711);
  std::string lockPath = o.stateDir + "/serve.lock";
  int lock = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0)
    return fail(o.stateDir + ": another frenzy-sched serve uses this state "
                "directory; stop it first or give another --state-dir");

  auto t0 = std::chrono::steady_clock::now();
  auto store = JobStore::open(o.stateDir + "/queue.db", o.dbTimeoutMs);
  if (!store)
    return fail(llvm::toString(store.takeError()));
  // The status page gets the cluster before the service takes it.
  std::unique_ptr<StatusHttp> http;
  if (!o.http.empty()) {
    auto h = StatusHttp::start(o, *cluster);
    if (!h)
      return fail(llvm::toString(h.takeError()));
    http = std::move(*h);
  }
  std::unique_ptr<LaunchBackend> backend;
  if (o.backend == "slurm")
    backend = makeSlurmBackend(
        *cluster, {o.stateDir, o.slurmTimeoutS, o.planTimeoutS, 1.0});
  else
    backend = makeLocalBackend();
  const char *backendName = backend->name();
  Service svc(o, std::move(*cluster), std::move(*store), std::move(backend));
  auto before = svc.storeRef().allocations();
  if (!before)
    return fail(llvm::toString(before.takeError()));
  auto ended = svc.reconcile(wallNow());
  if (!ended)
    return fail(llvm::toString(ended.takeError()));
  auto jobs = svc.storeRef().jobs();
  if (!jobs)
    return fail(llvm::toString(jobs.takeError()));
  sweepJobDirs(o.stateDir + "/jobs", *jobs);
  size_t queued = 0;
  for (const JobRow &j : *jobs)
    queued += j.state == JobState::Queued;
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  llvm::outs() << llvm::formatv(
      "frenzy-sched serve: {0} jobs in the queue database; {1} running "
      "adopted, {2} ended while the service was down; {3} queued; recovery "
      "took {4:f1} ms\n",
      jobs->size(), before->size() - size_t(*ended), *ended, queued, ms);

  auto listener = listenUnix(o.socket, o.socketMode);
  if (!listener)
    return fail(llvm::toString(listener.takeError()));
  if (http)
    llvm::outs() << "frenzy-sched serve: status page on " << http->url()
                 << " (port in " << o.stateDir << "/http.port)\n";
  llvm::outs() << "frenzy-sched serve: listening on " << o.socket << " ("
               << spec->name << ", " << svc.gpuCount() << " GPUs, backend "
               << backendName << ", policy " << o.policy << ")\n";
  llvm::outs().flush();
  std::signal(SIGTERM, onStop);
  std::signal(SIGINT, onStop);
  std::signal(SIGPIPE, SIG_IGN);
  int rc = 0;
  while (!stopRequested) {
    pollfd p{*listener, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      int c = ::accept4(*listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) {
        std::string line;
        std::vector<int> fds;
        llvm::json::Object reply;
        auto uid = peerUid(c);
        if (llvm::Error e = recvLine(c, line, fds, 5000)) {
          reply = llvm::json::Object{{"ok", false},
                                    {"error", llvm::toString(std::move(e))}};
        } else if (!uid) {
          reply = llvm::json::Object{
              {"ok", false}, {"error", llvm::toString(uid.takeError())}};
        } else {
          llvm::Expected<llvm::json::Value> req = llvm::json::parse(line);
          if (!req || !req->getAsObject()) {
            if (!req)
              llvm::consumeError(req.takeError());
            reply = llvm::json::Object{
                {"ok", false}, {"error", "a request is one JSON object"}};
          } else {
            reply = svc.handle(*req->getAsObject(), *uid, fds, wallNow());
          }
        }
        for (int f : fds)
          ::close(f);
        std::string text;
        llvm::raw_string_ostream os(text);
        os << llvm::json::Value(std::move(reply));
        llvm::consumeError(sendLine(c, os.str()));
        ::close(c);
      }
    }
    auto n = svc.reconcile(wallNow());
    llvm::Error e = n ? (svc.dirty ? svc.schedule(wallNow())
                                   : llvm::Error::success())
                      : n.takeError();
    if (e) {
      // A database that cannot be written stops the service: what it
      // would do next could not be recorded. Jobs keep running and are
      // adopted by the next start.
      rc = fail(llvm::toString(std::move(e)));
      break;
    }
  }
  ::close(*listener);
  ::unlink(o.socket.c_str());
  return rc;
}
