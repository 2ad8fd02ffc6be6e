//===- frenzy-sched.cpp - the multi-job scheduler front end ---------------===//
//
// Reads a cluster and a job queue (a YAML file, a Philly-derived trace or a
// seeded synthetic queue), looks up each job's option table once per model,
// rejects jobs that fit nowhere (with the reason; the rest go on), runs the
// chosen policies in the simulator and prints per-job placements and the
// metrics. Optionally writes sbatch scripts (and plans) of placed jobs.
// `frenzy-sched serve|submit|status|cancel|logs` are the long-running
// service and its client (ServeMain.cpp, Client.cpp).
//
//===----------------------------------------------------------------------===//
#include "JobArtifacts.h"
#include "LiveRun.h"
#include "ServeArgs.h"

#include "frenzy/Scheduler/Metrics.h"
#include "frenzy/Scheduler/Options.h"
#include "frenzy/Scheduler/Traces.h"

#include "frenzy/Support/ToolHelp.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace frenzy;
using namespace frenzy::sched;
namespace cl = llvm::cl;

static cl::OptionCategory schedCategory("frenzy-sched options");

static cl::opt<std::string> clusterFile("cluster", cl::cat(schedCategory), cl::desc("cluster YAML"),
                                        cl::value_desc("C.yaml"));
static cl::opt<std::string> jobsFile("jobs", cl::cat(schedCategory), cl::desc("job queue YAML"),
                                     cl::value_desc("Q.yaml"));
static cl::opt<std::string> phillyFile("philly",
                                       cl::cat(schedCategory), cl::desc("Philly-derived trace CSV"),
                                       cl::value_desc("philly.csv"));
static cl::opt<std::string>
    phillyStart("philly-start",
                cl::cat(schedCategory), cl::desc("first submission taken, \"YYYY-MM-DD HH:MM:SS\""),
                cl::init(""));
static cl::opt<unsigned> traceJobs("trace-jobs",
                                   cl::cat(schedCategory), cl::desc("jobs taken from --philly"),
                                   cl::init(500));
static cl::opt<double> arrivalScale("arrival-scale",
                                    cl::cat(schedCategory), cl::desc("trace arrival gaps x this"),
                                    cl::init(1.0));
static cl::opt<double> maxJobHours("max-job-hours",
                                   cl::cat(schedCategory), cl::desc("trace jobs cut to this length"),
                                   cl::init(24));
static cl::opt<unsigned> syntheticJobs("synthetic",
                                       cl::cat(schedCategory), cl::desc("N seeded synthetic jobs"),
                                       cl::init(0));
static cl::opt<uint64_t> seed("seed", cl::cat(schedCategory), cl::desc("synthetic seed"), cl::init(1));
static cl::opt<double> jobsPerHour("jobs-per-hour",
                                   cl::cat(schedCategory), cl::desc("synthetic arrival rate"),
                                   cl::init(30));
static cl::opt<std::string>
    policyName("policy", cl::cat(schedCategory), cl::desc("fifo, gavel, sia, frenzy, frenzy-static or all"),
               cl::init("frenzy"));
static cl::opt<bool> reallocate("realloc",
                             cl::cat(schedCategory), cl::desc("frenzy: grow running jobs onto idle "
                                      "GPUs (checkpoint-restart cost)"),
                             cl::init(false));
static cl::opt<std::string> baselineMode(
    "baseline-mode", cl::cat(schedCategory),
    cl::desc("gavel and sia: program (Gavel's LP, Sia's MILP, solved with "
             "CBC; default) or greedy (the fast approximation)"),
    cl::init("program"));
static cl::opt<std::string> gavelObjective(
    "gavel-objective", cl::cat(schedCategory),
    cl::desc("gavel's LP: max-min (fairness, default) or max-sum-throughput "
             "(the variant Sia's artifact compares against)"),
    cl::init("max-min"));
static cl::opt<double> solverSeconds(
    "solver-seconds", cl::cat(schedCategory),
    cl::desc("wall-time limit of one LP/MILP solve (then the best point "
             "found)"),
    cl::init(5));
static cl::opt<double> restartCost("restart-cost",
                                   cl::cat(schedCategory), cl::desc("seconds per checkpoint-restart"),
                                   cl::init(30));
static cl::opt<std::string>
    startCostText("start-cost",
              cl::cat(schedCategory), cl::desc("seconds of start-up before a new job makes progress "
                       "(launcher, ranks, runtime); default 0; with --live, `measure`: timed per GPU count before the queue"),
              cl::init("0"));
static cl::opt<std::string>
    emit("emit", cl::cat(schedCategory), cl::desc("jobs (per-job table and metrics), metrics, "
                          "options (option tables) or queue (the job queue "
                          "as YAML)"),
         cl::init("jobs"));
static cl::opt<std::string>
    outDir("out-dir", cl::cat(schedCategory), cl::desc("write NAME.sbatch per placed job here"),
           cl::init(""));
static cl::opt<std::string>
    frenzyOpt("frenzy-opt",
              cl::cat(schedCategory), cl::desc("with --out-dir: make NAME.plan.bin of ONNX jobs with "
                       "this frenzy-opt"),
              cl::init(""));

static cl::opt<bool>
    live("live", cl::cat(schedCategory), cl::desc("run the queue for real: each placed job as a "
                          "frenzy-launch process (CPU-rank clusters); needs "
                          "--out-dir, --frenzy-opt and --frenzy-launch"),
         cl::init(false));
static cl::opt<std::string>
    frenzyLaunch("frenzy-launch", cl::cat(schedCategory),
                 cl::desc("with --live: the runtime; with --out-dir: the "
                          "frenzy-launch the sbatch scripts run (default: "
                          "frenzy-launch from PATH)"),
                 cl::init(""));
static cl::opt<std::string>
    liveData("live-data",
             cl::cat(schedCategory), cl::desc("with --live: token file for frenzy-launch --data "
                      "(multi-rank plans need one)"),
             cl::init(""));
static cl::opt<double> liveLimit("live-limit",
                                 cl::cat(schedCategory), cl::desc("with --live: seconds for the whole "
                                          "queue before its jobs are killed"),
                                 cl::init(600));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "frenzy-sched: error: " << msg << "\n";
  return 1;
}

static llvm::Expected<std::vector<JobSpec>> readQueue() {
  int inputs = !jobsFile.empty() + !phillyFile.empty() + (syntheticJobs > 0);
  if (inputs != 1)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "give exactly one of --jobs=Q.yaml, --philly=TRACE.csv and "
        "--synthetic=N");
  if (!jobsFile.empty())
    return readJobQueue(jobsFile);
  if (!phillyFile.empty()) {
    PhillyOptions o;
    o.start = phillyStart;
    o.maxJobs = traceJobs;
    o.arrivalScale = arrivalScale;
    o.maxJobHours = maxJobHours;
    return readPhillyTrace(phillyFile, o);
  }
  SyntheticOptions o;
  o.seed = seed;
  o.jobs = syntheticJobs;
  o.jobsPerHour = jobsPerHour;
  return syntheticTrace(o);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc > 1) {
    llvm::StringRef sub = argv[1];
    llvm::ArrayRef<const char *> rest(argv + 2, argv + argc);
    if (sub == "serve")
      return serveMain(rest, argv[0]);
    if (sub == "submit" || sub == "status" || sub == "cancel" ||
        sub == "logs")
      return clientMain(sub, rest);
  }
  hideForeignOptions({&schedCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "frenzy-sched: places a queue of training jobs on a shared cluster of "
      "mixed GPUs and reports JCT, makespan and utilisation per policy\n");
  if (clusterFile.empty())
    return fail("--cluster=C.yaml is required");
  if (emit != "jobs" && emit != "metrics" && emit != "options" &&
      emit != "queue")
    return fail("--emit must be jobs, metrics, options or queue, not '" +
                emit + "'");
  double startCost = 0;
  bool measureStart = startCostText == "measure";
  if (measureStart && !live)
    return fail("--start-cost=measure times real launches: it needs --live");
  if (!measureStart && (llvm::StringRef(startCostText).getAsDouble(startCost) ||
                        !(startCost >= 0)))
    return fail("--start-cost needs seconds >= 0 or `measure`, not '" +
                startCostText + "'");
  if (!(restartCost >= 0))
    return fail("--restart-cost must not be negative");
  if (!(arrivalScale > 0) || !(maxJobHours > 0) || !(jobsPerHour > 0))
    return fail("--arrival-scale, --max-job-hours and --jobs-per-hour must "
                "be positive");
  PolicyOptions policyOptions;
  policyOptions.realloc = reallocate;
  if (baselineMode == "greedy")
    policyOptions.baseline = BaselineMode::Greedy;
  else if (baselineMode != "program")
    return fail("--baseline-mode must be program or greedy, not '" +
                baselineMode + "'");
  if (gavelObjective == "max-sum-throughput")
    policyOptions.gavel = GavelObjective::MaxSumThroughput;
  else if (gavelObjective != "max-min")
    return fail("--gavel-objective must be max-min or max-sum-throughput, "
                "not '" + gavelObjective + "'");
  if (!(solverSeconds > 0))
    return fail("--solver-seconds must be positive");
  policyOptions.solverSeconds = solverSeconds;
  std::vector<std::string> policies;
  if (policyName == "all")
    policies = {"fifo", "gavel", "sia", "frenzy"};
  else if (makePolicy(policyName))
    policies = {policyName};
  else
    return fail("unknown --policy '" + policyName + "'; valid: " +
                policyNames() + ", all");
  if (live && (policies.size() != 1 || reallocate ||
               (policyName != "fifo" && policyName != "frenzy" &&
                policyName != "frenzy-static")))
    return fail("--live runs one event-driven policy without moving jobs: "
                "--policy=fifo or --policy=frenzy (run as frenzy-static), "
                "without --realloc");
  // Live jobs are never moved: frenzy runs without its elastic growth.
  std::string livePolicy =
      policyName == "frenzy" ? std::string("frenzy-static") : policyName;
  if (live && (outDir.empty() || frenzyOpt.empty() || frenzyLaunch.empty()))
    return fail("--live needs --out-dir=DIR, --frenzy-opt=PATH and "
                "--frenzy-launch=PATH");
  if (!frenzyOpt.empty() && outDir.empty())
    return fail("--frenzy-opt needs --out-dir=DIR (where plans go)");

  auto spec = readClusterFile(clusterFile);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  auto cluster = SchedCluster::build(*spec);
  if (!cluster)
    return fail(clusterFile + ": " + llvm::toString(cluster.takeError()));
  auto queue = readQueue();
  if (!queue)
    return fail(llvm::toString(queue.takeError()));

  // Options once per model; a job that fits nowhere is rejected here and
  // the rest of the queue goes on.
  OptionCache cache(*cluster);
  std::vector<JobSpec> accepted;
  std::vector<SimJob> sim;
  std::vector<std::vector<JobOption>> userOpts;
  for (JobSpec &j : *queue) {
    auto options = cache.get(j);
    if (!options) {
      std::string why = llvm::toString(options.takeError());
      // An unreadable option table is an input error, not a rejection.
      if (!j.optionsFile.empty())
        return fail(why);
      llvm::errs() << "frenzy-sched: rejected: " << why << "\n";
      continue;
    }
    std::vector<JobOption> user = userRequestOptions(j, **options, *cluster);
    if (user.empty()) {
      llvm::errs() << "frenzy-sched: rejected: " << j.where << ": job '"
                   << j.name << "': its user request (" << j.userGpus << " "
                   << (j.userGpuType.empty() ? "GPUs" : j.userGpuType)
                   << ") cannot run it on any GPU type of the cluster\n";
      continue;
    }
    if (j.referenceSeconds > 0)
      j.steps = stepsFromReference(j, user, *cluster);
    accepted.push_back(j);
    SimJob s;
    s.options = *options;
    s.userOptions = std::move(user);
    sim.push_back(std::move(s));
  }
  for (size_t i = 0; i < sim.size(); ++i)
    sim[i].spec = &accepted[i];
  if (emit == "queue") { // trace jobs' steps are known now
    writeJobQueue(accepted, llvm::outs());
    return 0;
  }
  if (emit == "options") {
    for (const JobSpec &j : accepted) {
      llvm::outs() << "# job " << j.name << "\n";
      writeOptionTable(**cache.get(j), *cluster, j.modelKey(), llvm::outs());
    }
    return 0;
  }
  if (accepted.empty())
    return fail("no job can run on this cluster (each was rejected above)");

  SimConfig config;
  config.restartSeconds = restartCost;
  config.startSeconds = startCost;
  if (live) {
    for (const JobSpec &j : accepted)
      if (j.onnx.empty())
        return fail(j.where + ": job '" + j.name + "': --live runs ONNX jobs "
                    "only (it needs a model to compile and run)");
    LiveOptions lo{outDir, frenzyOpt, frenzyLaunch, liveLimit, liveData};
    // Jobs run in their own directories (the launch backend's working
    // directory is the log's): every path they are given is absolute.
    // (A program named without a slash is looked up on PATH.)
    for (std::string *path : {&lo.dir, &lo.frenzyOpt, &lo.frenzyLaunch,
                              &lo.data})
      if (!path->empty() &&
          (path == &lo.dir || path == &lo.data ||
           llvm::StringRef(*path).contains('/'))) {
        llvm::SmallString<256> abs(*path);
        llvm::sys::fs::make_absolute(abs);
        *path = abs.str().str();
      }
    if (measureStart) {
      auto measured = measureStartup(sim, *cluster, lo, 3);
      if (!measured)
        return fail(llvm::toString(measured.takeError()));
      config.startSecondsByGpus = std::move(*measured);
    }
    std::unique_ptr<Policy> policy = makePolicy(livePolicy);
    auto predicted = simulate(*cluster, sim, *policy, config);
    if (!predicted)
      return fail(llvm::toString(predicted.takeError()));
    return runLive(sim, *cluster, *makePolicy(livePolicy), *predicted, lo);
  }
  for (const std::string &p : policies) {
    std::unique_ptr<Policy> policy = makePolicy(p, policyOptions);
    auto result = simulate(*cluster, sim, *policy, config);
    if (!result)
      return fail(llvm::toString(result.takeError()));
    if (emit == "jobs")
      printJobTable(*result, llvm::outs());
    printMetrics(computeMetrics(*result), result->policy, llvm::outs());
    if (!outDir.empty() && policies.size() == 1)
      if (int rc = writeJobArtifacts(*result, accepted, *cluster,
                                     {outDir, frenzyOpt, frenzyLaunch}))
        return rc;
  }
  if (!outDir.empty() && policies.size() != 1)
    return fail("--out-dir needs one --policy (the placements differ)");
  return 0;
}
