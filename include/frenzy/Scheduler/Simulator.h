//===- Simulator.h - the discrete-event cluster simulator -------*- C++ -*-===//
//
// One event loop for every policy. Events: job arrivals, job completions
// and, for round-based policies, round boundaries. At each event time the
// loop first advances every running job's progress, then retires finished
// jobs (freeing their GPUs), then admits arrivals, then calls the policy
// once; the policy's wall time is one "decision". A job that is stopped and
// started again on different GPUs pays the checkpoint-restart cost: it holds
// its new GPUs but makes no progress for that long.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SCHEDULER_SIMULATOR_H
#define FRENZY_SCHEDULER_SIMULATOR_H

#include "frenzy/Scheduler/SchedCluster.h"

#include <map>
#include <memory>

namespace frenzy::sched {

struct SimJob {
  const JobSpec *spec = nullptr;
  /// The planner's options (Frenzy, Sia) and the user's fixed request on
  /// each type that can run it (FIFO, Gavel).
  const std::vector<JobOption> *options = nullptr;
  std::vector<JobOption> userOptions;
  enum class State { Pending, Waiting, Running, Done } state = State::Pending;
  double remainingSteps = 0;
  const JobOption *running = nullptr; // the option it runs with
  /// Adaptive frenzy: the efficient option it was placed on before it grew
  /// (its way back when others wait). Kept with the job, not the policy, so
  /// a driver that rebuilds its jobs each decision (the service) keeps it.
  const JobOption *placedOn = nullptr;
  Placement placement;
  double lastUpdate = 0, pausedUntil = 0;
  double lastMoved = 0; // when it last started or moved
  double firstStart = -1, finish = -1;
  int restarts = 0;
  bool ranBefore = false;
  std::vector<double> roundsOnType; // Gavel's received rounds per type
  double roundsActive = 0;
  std::string lastLayout, lastNodes; // what it finished on
  Placement lastPlacement;
  double lastStep = 0;
  int64_t lastGpus = 0;

  /// Seconds to finish on `o` from now, without restart costs.
  double secondsOn(const JobOption &o) const {
    return remainingSteps * o.stepSeconds;
  }
};

struct SimConfig {
  double restartSeconds = 30; // checkpoint, requeue, reload: per restart
  double startSeconds = 0;    // process and runtime start-up of a first start
  /// Measured start-up by the GPU count started on (the live mode's
  /// --start-cost=measure); counts not listed pay startSeconds.
  std::map<int64_t, double> startSecondsByGpus;
  double startFor(int64_t gpus) const {
    auto it = startSecondsByGpus.find(gpus);
    return it == startSecondsByGpus.end() ? startSeconds : it->second;
  }
};

class SimContext {
public:
  SimContext(SchedCluster &c, std::vector<SimJob> &j, const SimConfig &cfg)
      : clusterRef(c), jobList(j), config(cfg) {}
  double now = 0;
  SchedCluster &cluster() { return clusterRef; }
  std::vector<SimJob> &jobs() { return jobList; }
  /// Waiting and running jobs, in arrival order.
  const std::vector<int> &active() const { return activeList; }
  double restartSeconds() const { return config.restartSeconds; }

  /// Starts a waiting job on `o`; false (and nothing changes) when the GPUs
  /// are not free. `o` must outlive the run (an element of the job's
  /// tables).
  bool start(int job, const JobOption &o, Fit fit);
  /// Stops a running job (checkpointed: it keeps its progress).
  void stop(int job);
  /// Moves a running job to `o`, paying the restart cost; when `o` cannot
  /// be placed the job keeps its GPUs and option and false is returned.
  bool move(int job, const JobOption &o, Fit fit);

  /// For drivers other than the simulator (live mode): a job arrives; a
  /// running job's process ended (its GPUs are released).
  void admit(int job);
  void finish(int job);

private:
  friend class Simulator;
  SchedCluster &clusterRef;
  std::vector<SimJob> &jobList;
  const SimConfig &config;
  std::vector<int> activeList;
};

class Policy {
public:
  virtual ~Policy() = default;
  virtual const char *name() const = 0;
  /// Seconds between round boundaries; 0 for event-driven policies.
  virtual double roundSeconds() const { return 0; }
  virtual void schedule(SimContext &ctx) = 0;
};

/// How the baselines (gavel, sia) solve their allocation each round.
enum class BaselineMode {
  Program, // the papers' programs: Sia's MILP, Gavel's LP (CBC)
  Greedy,  // the fast mode: the same objectives by greedy filling
};
/// Gavel's objective: max-min fairness of normalised throughput (its
/// headline policy) or the sum of throughputs (the variant Sia's artifact
/// compares against).
enum class GavelObjective { MaxMin, MaxSumThroughput };

struct PolicyOptions {
  bool realloc = false; // frenzy: grow and shrink running jobs
  BaselineMode baseline = BaselineMode::Program;
  GavelObjective gavel = GavelObjective::MaxMin;
  double solverSeconds = 5; // wall-time limit of one program solve
};

/// Policies by name: fifo, gavel, sia, frenzy, frenzy-static; nullptr when
/// unknown.
std::unique_ptr<Policy> makePolicy(llvm::StringRef name,
                                   const PolicyOptions &options);
std::unique_ptr<Policy> makePolicy(llvm::StringRef name, bool realloc = false);
const char *policyNames();

struct JobResult {
  std::string name;
  double arrival = 0, start = -1, finish = -1;
  std::string layout;   // the last option it ran with
  std::string nodes;    // "a100-0:8,a100-1:4"
  Placement placement;  // the same, as node indices
  double stepSeconds = 0;
  int64_t gpus = 0;
  int restarts = 0;
};

struct SimResult {
  std::string policy;
  std::vector<JobResult> jobs; // in input order
  std::vector<double> decisionSeconds;
  double busyGpuSeconds = 0;
  int64_t totalGpus = 0;
};

/// Resets the jobs' progress and bookkeeping; returns their indices in
/// arrival order (stable). Every driver (simulator, live run) starts so.
std::vector<int> prepareJobs(std::vector<SimJob> &jobs, const SchedCluster &c);

/// Runs the jobs (their options already looked up) to completion. Errors:
/// a job that can never be placed (the queue would never drain).
llvm::Expected<SimResult> simulate(SchedCluster cluster,
                                   std::vector<SimJob> jobs, Policy &policy,
                                   const SimConfig &config = {});

/// The user's fixed request as one option per GPU type that can run it:
/// `userGpus` GPUs of that type at the speed of the best planner option of
/// that type using no more of them. A request too small for every type is
/// raised to the smallest count that fits (users ask for what runs).
std::vector<JobOption> userRequestOptions(const JobSpec &job,
                                          const std::vector<JobOption> &opts,
                                          const SchedCluster &c);

/// Steps of a trace job: its reference seconds divided by the step time of
/// its user request on the slowest type that runs it (at least 1).
int64_t stepsFromReference(const JobSpec &job,
                           const std::vector<JobOption> &userOptions,
                           const SchedCluster &c);

} // namespace frenzy::sched

#endif
