//===- LiveStartup.cpp - the live mode's measured start-up per GPU count --===//
//
// A live job's completion time includes what happens before its first step:
// frenzy-opt making its plan, mpirun starting its ranks, the runtime loading
// the plan. On small jobs that is most of the time, and it grows with the
// rank count (one mpirun daemon and process per rank), so one constant
// (--start-cost) cannot price a 1-rank and a 2-rank start alike. With
// --start-cost=measure the live mode times it before the queue starts, per
// GPU count the queue's options use: the job's plan made and run for one
// step on an otherwise idle cluster, less that step's predicted time.
//
//===----------------------------------------------------------------------===//
#include "LiveRun.h"

#include "JobArtifacts.h"
#include "LaunchBackend.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace frenzy;
using namespace frenzy::sched;

llvm::Expected<std::map<int64_t, double>>
frenzy::sched::measureStartup(const std::vector<SimJob> &jobs,
                              const SchedCluster &cluster,
                              const LiveOptions &o, int rounds) {
  // Per GPU count, the first job's fastest option of that count (the
  // queue's jobs share a model in the live bench; a mixed queue would pay
  // its first model's start-up).
  std::map<int64_t, std::pair<const SimJob *, const JobOption *>> probe;
  for (const SimJob &j : jobs)
    for (const std::vector<JobOption> *opts : {j.options, &j.userOptions})
      for (const JobOption &opt : *opts) {
        auto &slot = probe[opt.totalGpus()];
        if (!slot.second || (slot.first == &j &&
                             opt.stepSeconds < slot.second->stepSeconds))
          slot = {&j, &opt};
      }
  llvm::SmallString<256> dir(o.dir);
  llvm::sys::path::append(dir, "startup");
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "%s: cannot create: %s", dir.c_str(),
                                   ec.message().c_str());
  std::unique_ptr<LaunchBackend> backend = makeLocalBackend();
  std::map<int64_t, double> out;
  for (auto &[gpus, what] : probe) {
    const auto &[job, opt] = what;
    SchedCluster idle = cluster;
    std::optional<Placement> p = idle.allocate(*opt, Fit::BestFit);
    if (!p)
      continue; // the option needs a whole cluster it cannot have
    std::vector<double> took;
    for (int r = 0; r < rounds; ++r) {
      std::string base = (dir + "/gpus-" + llvm::Twine(gpus)).str();
      llvm::sys::fs::remove(base + ".cluster.yaml");
      llvm::sys::fs::remove(base + ".plan.bin");
      auto t0 = std::chrono::steady_clock::now();
      if (makeJobPlan(*job->spec, *p, cluster, o.frenzyOpt, base) != 0)
        return llvm::createStringError(std::errc::invalid_argument,
                                       "measuring start-up: frenzy-opt failed "
                                       "(see above)");
      LaunchRequest req;
      req.argv = {o.frenzyLaunch, base + ".plan.bin", "--steps=1"};
      if (!o.data.empty())
        req.argv.push_back("--data=" + o.data);
      req.log = base + ".log";
      req.exitFile = base + ".exit";
      llvm::sys::fs::remove(req.log);
      llvm::sys::fs::remove(req.exitFile);
      auto handle = backend->launch(
          req, [](const std::string &) { return llvm::Error::success(); });
      if (!handle)
        return handle.takeError();
      LaunchStatus s;
      // Bounded like the queue (--live-limit); polled, not slept on.
      for (;;) {
        s = backend->poll(*handle, req.exitFile);
        if (s.state != LaunchStatus::Running)
          break;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          t0)
                .count() > o.limitSeconds) {
          backend->stop(*handle);
          return llvm::createStringError(
              std::errc::timed_out,
              "measuring start-up: a one-step run of %lld GPU(s) passed "
              "--live-limit (log %s)",
              (long long)gpus, req.log.c_str());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (s.state != LaunchStatus::Exited || s.exitCode != 0)
        return llvm::createStringError(
            std::errc::io_error,
            "measuring start-up: the one-step run of %lld GPU(s) failed "
            "(exit %d); see %s",
            (long long)gpus, s.exitCode, req.log.c_str());
      double wall = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
      took.push_back(std::max(0.0, wall - opt->stepSeconds));
    }
    std::sort(took.begin(), took.end());
    out[gpus] = took[took.size() / 2];
  }
  std::string line;
  for (auto &[gpus, s] : out)
    line += llvm::formatv("{0}{1} GPU{2} {3:f2} s", line.empty() ? "" : ", ",
                          gpus, gpus == 1 ? "" : "s", s);
  llvm::errs() << "frenzy-sched: start-up measured: " << line
               << " (plan, launch and one step less its predicted time; "
               << rounds << " runs each, median)\n";
  return out;
}
