//===- Service.cpp - frenzy-sched serve: loop, recovery, launches ---------===//
//
// One thread, one loop: accept a request and answer it, look at every
// running allocation (its processes may have ended), and when something
// changed let the policy place queued jobs. The database is the only
// state that survives: each tick rebuilds the policy's view from it (the
// same SimContext and Policy objects the simulator and the live mode
// drive), so a restarted service decides exactly as the killed one would.
//
//===----------------------------------------------------------------------===//
#include "Service.h"

#include "JobArtifacts.h"
#include "plan/CheckpointLatest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <pwd.h>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;

std::string frenzy::sched::placementText(const Placement &p) {
  std::string s;
  for (const NodeGrant &g : p)
    s += (s.empty() ? "" : ",") + std::to_string(g.node) + ":" +
         std::to_string(g.count);
  return s;
}

std::optional<Placement> frenzy::sched::parsePlacement(llvm::StringRef s,
                                                       size_t nodes) {
  Placement p;
  llvm::SmallVector<llvm::StringRef> parts;
  s.split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    auto [n, c] = part.split(':');
    NodeGrant g;
    if (n.getAsInteger(10, g.node) || c.getAsInteger(10, g.count) ||
        g.node < 0 || size_t(g.node) >= nodes || g.count <= 0)
      return std::nullopt;
    p.push_back(g);
  }
  if (p.empty())
    return std::nullopt;
  return p;
}

/// An attempt's name for the launch backend: unique under one service.
static std::string attemptName(int64_t job, int64_t attempt) {
  return "job-" + std::to_string(job) + "." + std::to_string(attempt);
}

JobSpec Service::specOf(const JobRow &j) const {
  JobSpec s;
  s.name = "job-" + std::to_string(j.id);
  s.onnx = j.model;
  s.optionsFile = o.stateDir + "/options/" + j.optionsKey + ".opts";
  s.globalBatch = j.globalBatch;
  s.seq = j.seq;
  s.steps = j.steps;
  s.arrival = j.submitted;
  s.deadline = j.deadline;
  s.priority = int(j.priority);
  s.where = s.name;
  return s;
}

llvm::Expected<const std::vector<JobOption> *>
Service::options(const std::string &key, const JobRow &j) {
  auto it = tables.find(key);
  if (it != tables.end())
    return &it->second;
  auto text = store->optionTable(key);
  if (!text)
    return text.takeError();
  if (!*text)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "job %lld: its option table '%s' is not "
                                   "in the database",
                                   (long long)j.id, key.c_str());
  // The table parser reads files: the database's copy is the truth, the
  // file is rewritten from it.
  std::string path = specOf(j).optionsFile;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return llvm::createStringError(ec, "%s: %s", path.c_str(),
                                     ec.message().c_str());
    os << **text;
  }
  auto parsed = readOptionTable(path, cluster);
  if (!parsed)
    return parsed.takeError();
  return &(tables[key] = std::move(*parsed));
}

llvm::Error Service::attemptFailed(const JobRow &j, const std::string &why,
                                   double now) {
  auto failed = failedAttempts(j);
  if (!failed)
    return failed.takeError();
  if (*failed > o.maxRestarts)
    return store->endAttempt(
        j.id, JobState::Failed,
        why + "; gave up after " + std::to_string(*failed) +
            " failed attempts (--max-restarts=" + std::to_string(o.maxRestarts) + ")",
        now);
  return store->endAttempt(j.id, JobState::Queued,
                           why + "; resuming from its last checkpoint", now);
}

/// The log's last line that says "error" (what a crash printed), if any.
static std::string lastError(const std::string &log) {
  auto buf = llvm::MemoryBuffer::getFile(log);
  if (!buf)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->contains("error"))
      return it->trim().str();
  return "";
}

llvm::Expected<int> Service::reconcile(double now) {
  auto allocs = store->allocations();
  if (!allocs)
    return allocs.takeError();
  int ended = 0;
  for (const AllocationRow &a : *allocs) {
    auto job = store->job(a.job);
    if (!job)
      return job.takeError();
    const JobRow &j = **job;
    std::string attemptDir = j.dir + "/attempt-" + std::to_string(a.attempt);
    if (a.handle.empty()) {
      // Killed between recording the allocation and the launch: the
      // shepherd (if forked) saw its pipe close and started nothing; a
      // batch job submitted held is removed by its name.
      backend->abandon(attemptName(j.id, a.attempt));
      if (llvm::Error e = store->endAttempt(
              j.id, JobState::Queued, "the service stopped before attempt " +
              std::to_string(a.attempt) + " started", now))
        return std::move(e);
      ++ended;
      continue;
    }
    LaunchStatus s = backend->poll(a.handle, attemptDir + "/exit");
    if (s.state == LaunchStatus::Running)
      continue;
    ++ended;
    llvm::Error e = llvm::Error::success();
    if (s.state == LaunchStatus::Exited && s.exitCode == 0) {
      auto resized = finishResize(j, a, now);
      if (!resized)
        return resized.takeError();
      if (!*resized)
        e = store->endAttempt(j.id, JobState::Done, "", now);
    } else {
      backend->stop(a.handle); // stragglers of a lost session
      std::string why =
          s.state == LaunchStatus::Lost
              ? "attempt " + std::to_string(a.attempt) +
                    ": its processes were gone without an exit status"
              : "attempt " + std::to_string(a.attempt) + " exited with " +
                    std::to_string(s.exitCode);
      if (!s.detail.empty())
        why += ": " + s.detail;
      std::string err = lastError(j.dir + "/log");
      if (!err.empty())
        why += " (" + err + ")";
      e = attemptFailed(j, why, now);
    }
    if (e)
      return std::move(e);
  }
  if (ended)
    dirty = true;
  return ended;
}

llvm::Error Service::launch(const JobRow &j, const JobOption &opt,
                            const Placement &p, double now) {
  int64_t attempt = j.attempts + 1;
  std::string attemptDir = j.dir + "/attempt-" + std::to_string(attempt);
  AllocationRow a;
  a.job = j.id;
  a.attempt = attempt;
  a.placement = placementText(p);
  a.option = opt.layout;
  if (llvm::Error e = store->startAttempt(j.id, a, now))
    return e;
  JobRow started = j;
  started.attempts = attempt;
  // A directory left by an attempt that never started is reused.
  llvm::sys::fs::create_directories(attemptDir);
  bool asUser = ::geteuid() == 0 && j.uid != 0;
  if (asUser && ::chown(attemptDir.c_str(), uid_t(j.uid), gid_t(-1)) != 0)
    return attemptFailed(started, "cannot give " + attemptDir +
                                      " to its user", now);
  llvm::sys::fs::remove(attemptDir + "/exit");
  std::string ckpt = j.dir + "/ckpt";
  LaunchRequest r;
  r.argv = {o.frenzyLaunch, attemptDir + "/plan.plan.bin",
            "--steps=" + std::to_string(j.steps), "--checkpoint-dir=" + ckpt,
            "--checkpoint-every=" + std::to_string(o.checkpointEvery)};
  if (!j.data.empty())
    r.argv.push_back("--data=" + j.data);
  if (checkpoint::latestStep(ckpt) > 0)
    r.argv.push_back("--resume=" + ckpt);
  // How a resize stops it: after a checkpoint, on the service's word.
  llvm::sys::fs::remove(stopFile(j, attempt));
  r.argv.push_back("--stop-file=" + stopFile(j, attempt));
  r.log = j.dir + "/log";
  r.exitFile = attemptDir + "/exit";
  r.name = attemptName(j.id, attempt);
  r.placement = a.placement;
  r.plan = attemptDir + "/plan.plan.bin";
  r.predictedSeconds = opt.stepSeconds * double(j.steps);
  if (asUser) {
    r.uid = unsigned(j.uid);
    r.gid = unsigned(j.uid); // private group by Debian's convention
    if (struct passwd *pw = ::getpwuid(uid_t(j.uid))) {
      r.gid = pw->pw_gid;
      r.env.push_back({"HOME", pw->pw_dir});
    }
    // The service's temporary directory may be closed to the user; Open
    // MPI keeps its session files there.
    r.env.push_back({"TMPDIR", "/tmp"});
  }
  JobSpec spec = specOf(j);
  std::string base = attemptDir + "/plan";
  const SchedCluster &c = cluster;
  const std::string &opt_bin = o.frenzyOpt;
  r.prepare = [spec, p, &c, opt_bin, base, attempt] {
    std::fprintf(stderr, "frenzy-sched: %s attempt %lld on nodes %s\n",
                 spec.name.c_str(), (long long)attempt,
                 placementText(p).c_str());
    llvm::sys::fs::remove(base + ".cluster.yaml");
    llvm::sys::fs::remove(base + ".plan.bin");
    return makeJobPlan(spec, p, c, opt_bin, base);
  };
  auto handle = backend->launch(r, [&](const std::string &h) {
    return store->setHandle(j.id, h);
  });
  if (!handle) {
    std::string why = llvm::toString(handle.takeError());
    dirty = true; // requeued: tried again at the next turn
    return attemptFailed(started, "cannot start attempt " +
                                    std::to_string(attempt) + ": " + why,
                         now);
  }
  return llvm::Error::success();
}

/// The option a running job was started with: the one whose layout its
/// allocation records and whose GPUs per type are those of its placement
/// (the policy predicts its completion from it); the first option with
/// those GPUs when the layout is gone from the table, else the first.
const JobOption *frenzy::sched::runningOption(const SimJob &job,
                                             const std::string &layout,
                                             const Placement &p,
                                             const SchedCluster &cluster) {
  std::map<int, int64_t> perType;
  for (const NodeGrant &g : p)
    perType[cluster.nodes()[g.node].type] += g.count;
  auto sameGpus = [&](const JobOption &o) {
    if (o.gpus.size() != perType.size())
      return false;
    for (const TypeCount &t : o.gpus) {
      auto it = perType.find(t.type);
      if (it == perType.end() || it->second != t.count)
        return false;
    }
    return true;
  };
  // The planner's options, then the user's request (what fifo runs).
  const JobOption *gpusOnly = nullptr;
  for (const std::vector<JobOption> *opts : {job.options, &job.userOptions})
    for (const JobOption &o : *opts) {
      if (!sameGpus(o))
        continue;
      if (o.layout == layout)
        return &o;
      if (!gpusOnly)
        gpusOnly = &o;
    }
  return gpusOnly ? gpusOnly : &job.options->front();
}

llvm::Error Service::schedule(double now) {
  dirty = false;
  auto queued = store->queued();
  if (!queued)
    return queued.takeError();
  bool resizing = o.policy == "frenzy";
  if (queued->empty() && !resizing)
    return llvm::Error::success();
  auto allocs = store->allocations();
  if (!allocs)
    return allocs.takeError();
  // The policy's view: the cluster with running jobs' GPUs taken, running
  // jobs (their predicted completions matter to it) and the queue.
  SchedCluster view = cluster;
  std::vector<JobRow> rows;
  std::vector<Placement> held;
  for (const AllocationRow &a : *allocs) {
    auto job = store->job(a.job);
    if (!job)
      return job.takeError();
    std::optional<Placement> p = parsePlacement(a.placement,
                                                cluster.nodes().size());
    if (!p || !view.take(*p))
      return llvm::createStringError(
          std::errc::invalid_argument,
          "job %lld: its allocation '%s' does not fit the cluster (was the "
          "cluster file changed while it ran?)",
          (long long)a.job, a.placement.c_str());
    rows.push_back(**job);
    held.push_back(*p);
  }
  // GPUs stay taken until their processes end: what a job just started
  // may use is what no allocation holds (a job being resized holds its
  // old GPUs until it has stopped).
  SchedCluster busy = view;
  size_t running = rows.size();
  rows.insert(rows.end(), queued->begin(), queued->end());
  std::vector<JobSpec> specs;
  specs.reserve(rows.size());
  std::vector<SimJob> jobs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    specs.push_back(specOf(rows[i]));
    auto opts = options(rows[i].optionsKey, rows[i]);
    if (!opts)
      return opts.takeError();
    jobs[i].spec = &specs[i];
    jobs[i].options = *opts;
    jobs[i].userOptions = userRequestOptions(specs[i], **opts, view);
    // Progress is what the last checkpoint holds: a restart resumes there
    // (a job that never started has none to look for).
    int64_t doneSteps =
        rows[i].attempts ? checkpoint::latestStep(rows[i].dir + "/ckpt") : 0;
    jobs[i].remainingSteps = double(std::max<int64_t>(1, rows[i].steps -
                                                             doneSteps));
    jobs[i].roundsOnType.assign(view.types().size(), 0);
    // The way back of a grown job matters while it runs; a queued job gets
    // a new one when it is placed.
    if (i < running)
      jobs[i].placedOn = placedOnOf(rows[i], **opts);
  }
  SimConfig config;
  config.restartSeconds = o.restartCost;
  SimContext ctx(view, jobs, config);
  ctx.now = now;
  std::vector<const JobOption *> placedBefore(rows.size()), ranOn(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ctx.admit(int(i));
    placedBefore[i] = jobs[i].placedOn;
    if (i < running) {
      jobs[i].state = SimJob::State::Running;
      jobs[i].running = runningOption(jobs[i], (*allocs)[i].option, held[i],
                                      cluster);
      ranOn[i] = jobs[i].running;
      jobs[i].placement = held[i];
      jobs[i].lastUpdate = now;
      jobs[i].lastMoved = jobs[i].firstStart = (*allocs)[i].started;
      jobs[i].ranBefore = true;
    }
  }
  // frenzy resizes running jobs through checkpoint, re-plan and resume;
  // frenzy-static and fifo never move one. Built once, so its one-time
  // warnings are printed once per service, not per round.
  if (!policy)
    policy = makePolicy(o.policy);
  policy->schedule(ctx);
  for (size_t i = 0; i < rows.size(); ++i)
    if (jobs[i].placedOn && jobs[i].placedOn != placedBefore[i])
      if (llvm::Error e = store->addEvent(rows[i].id, "placed-on",
                                          jobs[i].placedOn->layout, now))
        return e;
  for (size_t i = 0; i < running; ++i) {
    const AllocationRow &a = (*allocs)[i];
    bool moved = jobs[i].state != SimJob::State::Running ||
                 jobs[i].running != ranOn[i] ||
                 placementText(jobs[i].placement) != a.placement;
    if (!moved || resizePending(rows[i], a))
      continue;
    bool stays = jobs[i].state == SimJob::State::Running;
    if (llvm::Error e = requestResize(rows[i], a,
                                      stays ? jobs[i].running : nullptr,
                                      jobs[i].placement, now))
      return e;
  }
  for (size_t i = running; i < rows.size(); ++i)
    if (jobs[i].state == SimJob::State::Running &&
        busy.take(jobs[i].placement)) // else: next round, once freed
      if (llvm::Error e = launch(rows[i], *jobs[i].running,
                                 jobs[i].placement, now))
        return e;
  return llvm::Error::success();
}
