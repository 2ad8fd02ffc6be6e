//===- LaunchBackend.h - how the scheduler starts a job's processes -*- C++ -*-===//
//
// The one seam between deciding and running: a backend starts a job's
// processes and later says whether they still run, how they ended, or that
// they are gone without a word (the machine or the processes were lost).
// Its handle is a string the caller stores (the service keeps it in its
// database), so a restarted caller can ask about processes that an earlier
// instance started. The local backend runs them on this machine; the Slurm
// backend (SlurmBackend.cpp: sbatch / squeue / scontrol / sacct, handle =
// "slurm:JOBID") implements the same interface.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_LAUNCHBACKEND_H
#define FRENZY_TOOLS_FRENZY_SCHED_LAUNCHBACKEND_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace frenzy::sched {

struct LaunchRequest {
  std::vector<std::string> argv; // argv[0] is the program's path
  std::string log;               // stdout and stderr, appended
  std::string exitFile;          // the exit status is written here at the end
  /// Runs in the job's own process before argv (e.g. frenzy-opt making
  /// the plan for the job's GPUs); a non-zero result is the job's exit
  /// status and argv is not run.
  std::function<int()> prepare;
  /// Run as this user (the service runs as root, jobs as their owners).
  std::optional<unsigned> uid, gid;
  /// Environment variables set for the job (others are inherited).
  std::vector<std::pair<std::string, std::string>> env;
  /// For batch backends (Slurm): a name unique to this job's attempt under
  /// this service, the GPUs it was given ("node:count,..."), the plan
  /// `prepare` writes (its rank order places the tasks) and the predicted
  /// run time in seconds (the batch job's time limit is derived from it).
  std::string name, placement, plan;
  double predictedSeconds = 0;
};

struct LaunchStatus {
  enum State { Running, Exited, Lost } state = Lost;
  int exitCode = 0; // Exited: 0 ok; 128+N killed by signal N
  std::string detail; // the backend's own words on how it ended ("" = none)
};

class LaunchBackend {
public:
  virtual ~LaunchBackend() = default;
  virtual const char *name() const = 0;
  /// Starts the job. `commit` gets the handle before the job does any
  /// work; when it fails (e.g. the handle could not be stored) the job is
  /// abandoned unstarted and its error returned. A caller killed between
  /// the two never leaves a job that nobody recorded.
  virtual llvm::Expected<std::string>
  launch(const LaunchRequest &r,
         llvm::function_ref<llvm::Error(const std::string &)> commit) = 0;
  virtual LaunchStatus poll(const std::string &handle,
                            const std::string &exitFile) = 0;
  /// Ends every process of the job (no-op when none is left).
  virtual void stop(const std::string &handle) = 0;
  /// An attempt whose handle was never committed (the caller was killed
  /// or the launch failed half way): a backend that may have left
  /// something under the request's `name` removes it.
  virtual void abandon(const std::string &name) {}
};

/// Processes on this machine: each job a session of its own (setsid) led
/// by a small shepherd that runs `prepare`, then argv, and writes the exit
/// status; handle "local:PID:STARTTIME" (the leader's /proc start time, so
/// a reused pid is never mistaken for the job).
std::unique_ptr<LaunchBackend> makeLocalBackend();

struct SlurmBackendOptions {
  std::string stateDir;  // tags the Slurm job names of this service's jobs
  int timeoutS = 10;     // bound on every sbatch/squeue/scontrol/sacct/scancel
  int prepareTimeoutS = 300; // bound on `prepare` (frenzy-opt)
  double pollS = 1;      // squeue at most this often
};
class SchedCluster;
/// Jobs as Slurm batch jobs: the scripts of Sbatch.h, submitted held and
/// released only once their id is committed; state from squeue, then
/// scontrol and sacct once a job has left the queue.
std::unique_ptr<LaunchBackend> makeSlurmBackend(const SchedCluster &c,
                                                const SlurmBackendOptions &o);

} // namespace frenzy::sched

#endif
