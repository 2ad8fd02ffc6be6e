//===- LiveRun.cpp - run a queue for real on CPU ranks --------------------===//
//
// The same policy objects as the simulator, driven by the wall clock and by
// real process exits instead of predicted completions, so that predicted
// and measured JCT can be compared job by job on a small emulated cluster
// (nodes of `gpu: cpu` ranks). Processes are started through the local
// launch backend (the one `frenzy-sched serve` uses) and polled without
// blocking; only processes this run started are ever killed.
//
//===----------------------------------------------------------------------===//
#include "LiveRun.h"

#include "JobArtifacts.h"
#include "LaunchBackend.h"

#include "frenzy/Scheduler/Metrics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <thread>

using namespace frenzy;
using namespace frenzy::sched;

namespace {

struct Running {
  int job;
  std::string handle, log, exitFile;
};

int fail(const llvm::Twine &msg) {
  llvm::errs() << "frenzy-sched: error: " << msg << "\n";
  return 1;
}

} // namespace

int frenzy::sched::runLive(std::vector<SimJob> jobs,
                           const SchedCluster &clusterIn, Policy &policy,
                           const SimResult &predicted, const LiveOptions &o) {
  if (std::error_code ec = llvm::sys::fs::create_directories(o.dir))
    return fail(o.dir + ": cannot create directory: " + ec.message());
  SchedCluster cluster = clusterIn;
  SimConfig config;
  SimContext ctx(cluster, jobs, config);
  size_t n = jobs.size();
  std::vector<int> order = prepareJobs(jobs, cluster);
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  std::vector<Running> running;
  std::vector<bool> launched(n, false);
  std::vector<double> start(n, -1), finish(n, -1), planned(n, 0);
  size_t next = 0, done = 0;
  std::unique_ptr<LaunchBackend> backend = makeLocalBackend();
  // Ends the processes this run started (each job's whole session).
  auto killAll = [&] {
    for (Running &r : running)
      backend->stop(r.handle);
  };
  while (done < n) {
    ctx.now = elapsed();
    if (ctx.now > o.limitSeconds) {
      killAll();
      return fail("live run passed --live-limit=" +
                  llvm::Twine(int(o.limitSeconds)) +
                  " s; its jobs were killed (logs in " + o.dir + ")");
    }
    bool changed = false;
    while (next < n && jobs[order[next]].spec->arrival <= ctx.now) {
      ctx.admit(order[next++]);
      changed = true;
    }
    for (size_t k = 0; k < running.size();) {
      LaunchStatus w = backend->poll(running[k].handle, running[k].exitFile);
      if (w.state == LaunchStatus::Running) {
        ++k;
        continue;
      }
      int j = running[k].job;
      if (w.state == LaunchStatus::Lost)
        w.exitCode = -1;
      if (w.exitCode != 0) {
        std::string log = running[k].log;
        running.erase(running.begin() + k);
        killAll();
        return fail("job '" + jobs[j].spec->name + "': frenzy-launch exited "
                    "with " + llvm::Twine(w.exitCode) + "; see " + log);
      }
      ctx.now = elapsed();
      ctx.finish(j);
      finish[j] = ctx.now;
      ++done;
      changed = true;
      running.erase(running.begin() + k);
    }
    if (changed) {
      policy.schedule(ctx);
      for (int j : ctx.active()) {
        if (jobs[j].state != SimJob::State::Running || launched[j])
          continue;
        launched[j] = true;
        start[j] = elapsed();
        llvm::SmallString<256> base(o.dir);
        llvm::sys::path::append(base, jobs[j].spec->name);
        if (int rc = makeJobPlan(*jobs[j].spec, jobs[j].placement, cluster,
                                 o.frenzyOpt, base.str().str())) {
          killAll();
          return rc;
        }
        planned[j] = elapsed() - start[j];
        std::string plan = (base + ".plan.bin").str();
        std::string log = (base + ".log").str();
        std::string steps = "--steps=" + std::to_string(jobs[j].spec->steps);
        LaunchRequest req;
        req.argv = {o.frenzyLaunch, plan, steps};
        if (!o.data.empty())
          req.argv.push_back("--data=" + o.data);
        req.log = log;
        req.exitFile = (base + ".exit").str();
        llvm::sys::fs::remove(log);
        llvm::sys::fs::remove(req.exitFile);
        auto handle = backend->launch(
            req, [](const std::string &) { return llvm::Error::success(); });
        if (!handle) {
          killAll();
          return fail("job '" + jobs[j].spec->name + "': cannot start " +
                      o.frenzyLaunch + ": " +
                      llvm::toString(handle.takeError()));
        }
        running.push_back({j, *handle, log, req.exitFile});
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // plan_s: frenzy-opt's time for the job's placement, inside its
  // measured JCT (the simulator assumes cached options and no start-up).
  llvm::outs() << "job\tgpus\tnodes\tpredicted_start_s\tpredicted_jct_s\t"
                  "measured_start_s\tmeasured_jct_s\tplan_s\t"
                  "measured/predicted\n";
  double sumP = 0, sumM = 0;
  for (size_t j = 0; j < n; ++j) {
    const JobResult &p = predicted.jobs[j];
    double pj = p.finish - p.arrival, mj = finish[j] - jobs[j].spec->arrival;
    sumP += pj;
    sumM += mj;
    llvm::outs() << llvm::formatv("{0}\t{1}\t{2}\t{3:f2}\t{4:f2}\t{5:f2}\t"
                                  "{6:f2}\t{7:f2}\t{8:f2}\n",
                                  p.name, p.gpus, p.nodes, p.start, pj,
                                  start[j], mj, planned[j],
                                  pj > 0 ? mj / pj : 0);
  }
  llvm::outs() << llvm::formatv("live: {0} jobs, avg_jct_predicted_s={1:f2} "
                                "avg_jct_measured_s={2:f2}\n",
                                n, sumP / double(n), sumM / double(n));
  return 0;
}
