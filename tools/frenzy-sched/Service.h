//===- Service.h - frenzy-sched serve: the long-running scheduler -*- C++ -*-===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_SERVICE_H
#define FRENZY_TOOLS_FRENZY_SCHED_SERVICE_H

#include "LaunchBackend.h"

#include "frenzy/Scheduler/Options.h"
#include "frenzy/Scheduler/Simulator.h"
#include "frenzy/Service/JobStore.h"

#include "llvm/Support/JSON.h"

#include <map>

namespace frenzy::sched {

struct ServeOptions {
  std::string stateDir;     // queue.db, jobs/, options/, serve.sock
  std::string clusterFile;
  std::string socket;       // default STATE/serve.sock
  unsigned socketMode = 0600; // who may connect (and so submit)
  std::string frenzyOpt, frenzyLaunch;
  std::string policy = "frenzy"; // an event-driven policy
  /// Seconds the policy charges a resize (stop at a checkpoint, re-plan,
  /// resume): the simulator's default.
  double restartCost = 30;
  int maxRestarts = 2;       // attempts after the first before a job fails
  int checkpointEvery = 1;   // steps between a job's checkpoints
  int dbTimeoutMs = 5000;    // waiting for a locked database
  int planTimeoutS = 300;    // frenzy-opt making a submission's options
  // The status page (ServiceHttp.cpp): off unless --http=HOST:PORT.
  std::string http;
  bool httpAllowRemote = false;   // bind a non-loopback address
  int httpTimeoutMs = 2000;       // to read a request, and to write a reply
  double statusWindowS = 3 * 3600; // how far back the timeline reaches
  std::string backend = "local"; // local | slurm (LaunchBackend.h)
  int slurmTimeoutS = 10;    // bound on each Slurm command
};

/// The running service: its database, cluster, backend and the option
/// tables it has parsed. Requests (ServiceRequests.cpp) and the loop with
/// its reconciliation and launches (Service.cpp) share it.
class Service {
public:
  Service(const ServeOptions &o, SchedCluster cluster,
          std::unique_ptr<service::JobStore> store,
          std::unique_ptr<LaunchBackend> backend)
      : o(o), cluster(std::move(cluster)), store(std::move(store)),
        backend(std::move(backend)) {}

  /// Brings the database in line with the processes that actually run
  /// (after a restart: adopt, collect, or requeue/fail each allocation).
  /// Returns how many allocations ended; errors are database errors.
  llvm::Expected<int> reconcile(double now);
  /// Starts what the policy places now.
  llvm::Error schedule(double now);
  /// Answers one request of user `uid` (fds: files it sent).
  llvm::json::Object handle(const llvm::json::Object &req, unsigned uid,
                            std::vector<int> &fds, double now);
  /// The state change since the last schedule() call.
  bool dirty = true;
  service::JobStore &storeRef() { return *store; }
  int64_t gpuCount() const { return cluster.totalGpus(); }

private:
  llvm::json::Object submit(const llvm::json::Object &req, unsigned uid,
                            std::vector<int> &fds, double now);
  llvm::json::Object status(const llvm::json::Object &req, unsigned uid);
  llvm::json::Object cancel(const llvm::json::Object &req, unsigned uid,
                            double now);
  llvm::json::Object logs(const llvm::json::Object &req, unsigned uid);
  /// The status page's document (ServiceHttp.cpp).
  llvm::json::Object page(double now);
  /// The job of `req["job"]` if `uid` may see it, else an error reply.
  llvm::Expected<service::JobRow> ownJob(const llvm::json::Object &req,
                                         unsigned uid);
  /// The parsed option table under `key` (from the database).
  llvm::Expected<const std::vector<JobOption> *>
  options(const std::string &key, const service::JobRow &j);
  JobSpec specOf(const service::JobRow &j) const;
  llvm::Error launch(const service::JobRow &j, const JobOption &o,
                     const Placement &p, double now);
  /// An attempt ended with `why` (crashed or lost): requeued, or failed
  /// once it used up --max-restarts.
  llvm::Error attemptFailed(const service::JobRow &j, const std::string &why,
                            double now);

  // Resizing a running job (ServiceResize.cpp).
  static std::string stopFile(const service::JobRow &j, int64_t attempt);
  /// Whether the attempt was asked to stop for a resize.
  static bool resizePending(const service::JobRow &j,
                            const service::AllocationRow &a);
  /// Asks the attempt to stop after its next checkpoint, to go to `to` on
  /// `where` (to wait in the queue when `to` is null).
  llvm::Error requestResize(const service::JobRow &j,
                            const service::AllocationRow &a,
                            const JobOption *to, const Placement &where,
                            double now);
  /// An attempt that exited 0: when it stopped for a resize, requeues it
  /// and starts it on its target if free; true then.
  llvm::Expected<bool> finishResize(const service::JobRow &j,
                                    const service::AllocationRow &a,
                                    double now);
  /// Attempts that failed (started ones, resizes not counted).
  llvm::Expected<int> failedAttempts(const service::JobRow &j);
  /// The option a grown job goes back to (its last "placed-on" event).
  const JobOption *placedOnOf(const service::JobRow &j,
                              const std::vector<JobOption> &opts);

  const ServeOptions &o;
  SchedCluster cluster; // every GPU free; allocations are applied per use
  std::unique_ptr<service::JobStore> store;
  std::unique_ptr<LaunchBackend> backend;
  std::map<std::string, std::vector<JobOption>> tables;
  std::unique_ptr<Policy> policy; // built at the first schedule()
};

/// `frenzy-sched serve ARGS`: runs until SIGTERM/SIGINT (jobs keep running
/// and are adopted by the next start). Returns the exit code.
int serveMain(llvm::ArrayRef<const char *> args, const char *argv0);

/// The option a running job was started with, among `job`'s options and
/// user requests (Service.cpp; the status page predicts its finish from
/// the same one). `job.options` is not empty.
const JobOption *runningOption(const SimJob &job, const std::string &layout,
                               const Placement &p,
                               const SchedCluster &cluster);

/// "node:count,..." of a placement and back.
std::string placementText(const Placement &p);
std::optional<Placement> parsePlacement(llvm::StringRef s, size_t nodes);

} // namespace frenzy::sched

#endif
