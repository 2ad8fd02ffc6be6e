//===- SlurmBackend.cpp - serve's jobs as Slurm batch jobs ----------------===//
//
// An attempt becomes one sbatch script of Sbatch.h (the job's nodes pinned
// by --nodelist, tasks in plan order), whose tasks run the command the
// service chose. Recording is the point of care: the script is submitted
// with --hold, its id committed to the database, and only then released.
// A service killed before the commit leaves a held job that never runs
// (the next start cancels it by name: abandon(); attempt names are not
// reused, so a submission that a controller took only after sbatch timed
// out is recognised too and cancelled); one killed after the
// commit leaves a recorded job, released when the next start polls it.
// So no attempt runs unrecorded and none is started twice.
//
// State: squeue lists the queue (at most once per pollS, one call for all
// jobs); a job that has left it is looked up with scontrol (the
// controller keeps finished jobs for MinJobAge) and then sacct (accounting,
// where the site has it). A Slurm command that fails or passes the
// timeout leaves the job's state unknown, which the service treats as
// still running: a controller that is down never fails or requeues a job
// that may be running. Every command is bounded (BoundedChild.h).
//
//===----------------------------------------------------------------------===//
#include "BoundedChild.h"
#include "JobArtifacts.h"
#include "LaunchBackend.h"
#include "Service.h"

#include "frenzy/Scheduler/Sbatch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <fcntl.h>
#include <grp.h>
#include <map>
#include <set>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::sched;

namespace {

using Clock = std::chrono::steady_clock;

/// One line for a Slurm command that did not do its work.
std::string commandError(const std::vector<std::string> &argv,
                         const ChildResult &r, int timeoutS) {
  if (r.timedOut)
    return llvm::formatv("{0} did not answer within {1} s (--slurm-timeout; "
                         "is slurmctld up?)",
                         argv[0], timeoutS);
  llvm::StringRef err = llvm::StringRef(r.err).trim();
  // Slurm repeats itself over several lines; the last one says what failed.
  err = err.rsplit('\n').second.empty() ? err : err.rsplit('\n').second;
  return llvm::formatv("{0} failed (exit {1}){2}{3}", argv[0], r.status,
                       err.empty() ? "" : ": ", err.trim());
}

/// The job's user, group and environment in this (child) process.
int becomeUser(const LaunchRequest &r) {
  if (r.gid && (::setgroups(0, nullptr) != 0 || ::setgid(*r.gid) != 0))
    return 126;
  if (r.uid && ::setuid(*r.uid) != 0)
    return 126;
  for (const auto &[name, value] : r.env)
    ::setenv(name.c_str(), value.c_str(), 1);
  return 0;
}

/// "STATE", "a:b" and the reason of a finished Slurm job, as its exit.
LaunchStatus endedAs(llvm::StringRef id, llvm::StringRef state,
                     llvm::StringRef exit, llvm::StringRef reason) {
  LaunchStatus s;
  s.state = LaunchStatus::Exited;
  state = state.split(' ').first; // "CANCELLED by 0"
  if (state == "COMPLETED")
    return s;
  auto [a, b] = exit.split(':');
  int code = 0, sig = 0;
  a.getAsInteger(10, code);
  b.getAsInteger(10, sig);
  s.exitCode = code ? code : sig ? 128 + sig : 1;
  s.detail = "slurm job " + id.str() + " ended " + state.str() + " (exit " +
             exit.str();
  if (!reason.empty() && reason != "None")
    s.detail += ", reason " + reason.str();
  s.detail += ")";
  return s;
}

/// States in which a job still holds (or will hold) its nodes.
bool stillThere(llvm::StringRef state) {
  static const llvm::StringRef live[] = {
      "PENDING",  "RUNNING",     "SUSPENDED",   "COMPLETING", "CONFIGURING",
      "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",  "SIGNALING",
      "STAGE_OUT", "STOPPED",    "RESV_DEL_HOLD"};
  return llvm::is_contained(live, state);
}

/// `KEY=VALUE` of one `scontrol show job -o` line.
llvm::StringRef field(llvm::StringRef line, llvm::StringRef key) {
  std::string k = (key + "=").str();
  for (size_t at = line.find(k); at != llvm::StringRef::npos;
       at = line.find(k, at + 1))
    if (at == 0 || line[at - 1] == ' ')
      return line.substr(at + key.size() + 1).split(' ').first;
  return "";
}

class SlurmBackend : public LaunchBackend {
public:
  SlurmBackend(const SchedCluster &c, const SlurmBackendOptions &o)
      : cluster(c), o(o) {
    // This service's jobs among others' on the same Slurm cluster.
    tag = llvm::formatv("fz{0:x-}", llvm::xxh3_64bits(o.stateDir) & 0xffffff);
  }
  const char *name() const override { return "slurm"; }

  llvm::Expected<std::string>
  launch(const LaunchRequest &r,
         llvm::function_ref<llvm::Error(const std::string &)> commit) override;
  LaunchStatus poll(const std::string &handle,
                    const std::string &exitFile) override;
  void stop(const std::string &handle) override;
  void abandon(const std::string &name) override;

private:
  ChildResult slurm(const std::vector<std::string> &argv,
                    const LaunchRequest *asUser = nullptr) {
    return runChild(
        [&] {
          if (asUser)
            if (int rc = becomeUser(*asUser))
              return rc;
          return execArgv(argv);
        },
        o.timeoutS);
  }
  bool run(const std::vector<std::string> &argv, std::string &err) {
    ChildResult r = slurm(argv);
    if (r.status == 0)
      return true;
    err = commandError(argv, r, o.timeoutS);
    return false;
  }
  void warn(const llvm::Twine &msg) {
    llvm::errs() << "frenzy-sched serve: warning: " << msg << "\n";
  }
  llvm::Error writeScript(const LaunchRequest &r, const std::string &dir,
                          const std::string &script);
  /// The queue as squeue says it (refreshed at most every pollS); false
  /// while squeue does not answer.
  bool refresh();
  LaunchStatus afterQueue(const std::string &id);
  void release(const std::string &id);

  SchedCluster cluster;
  SlurmBackendOptions o;
  std::string tag;
  struct Queued {
    std::string state, reason;
  };
  std::map<std::string, Queued> queue; // this service's jobs, by id
  std::set<std::string> orphans;       // names of abandoned attempts
  std::set<std::string> seen; // ids released or seen not held since start
  Clock::time_point taken;
  bool fresh = false, answered = false, warned = false;
};

llvm::Error SlurmBackend::writeScript(const LaunchRequest &r,
                                      const std::string &dir,
                                      const std::string &script) {
  std::optional<Placement> p =
      parsePlacement(r.placement, cluster.nodes().size());
  if (!p)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "placement '%s' does not fit the cluster",
                                   r.placement.c_str());
  auto ranks = planRankNodes(r.plan);
  if (!ranks)
    return ranks.takeError();
  SbatchJob sj;
  sj.name = tag + "-" + r.name;
  sj.placement = *p;
  sj.predictedSeconds = r.predictedSeconds;
  sj.rankNodes = std::move(*ranks);
  sj.command = r.argv;
  // A job that srun could not start in plan order would only refuse.
  if (std::string why = planOrderProblem(*p, cluster, sj.rankNodes);
      !why.empty())
    return llvm::createStringError(std::errc::invalid_argument, "%s",
                                   why.c_str());
  std::error_code ec;
  if (sbatchComponents(*p, cluster, sj.rankNodes).size() == 1) {
    sj.hostfile = dir + "/plan.hosts";
    llvm::raw_fd_ostream hosts(sj.hostfile, ec);
    for (const std::string &n : sj.rankNodes)
      hosts << n << "\n";
    if (ec)
      return llvm::createStringError(ec, "%s: %s", sj.hostfile.c_str(),
                                     ec.message().c_str());
  }
  llvm::raw_fd_ostream os(script, ec);
  if (ec)
    return llvm::createStringError(ec, "%s: %s", script.c_str(),
                                   ec.message().c_str());
  writeSbatchScript(sj, cluster, os);
  return llvm::Error::success();
}

llvm::Expected<std::string> SlurmBackend::launch(
    const LaunchRequest &r,
    llvm::function_ref<llvm::Error(const std::string &)> commit) {
  std::string dir = r.exitFile.substr(0, r.exitFile.rfind('/'));
  auto failed = [](const llvm::Twine &why) {
    return llvm::createStringError(std::errc::io_error, "%s",
                                   why.str().c_str());
  };
  // The plan is made here, as the job's user, its output in the job's log
  // (the local backend does it in the job's own process).
  if (r.prepare) {
    ChildResult p = runChild(
        [&] {
          if (int rc = becomeUser(r))
            return rc;
          int log = ::open(r.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
          if (log < 0 || ::chdir(dir.c_str()) != 0)
            return 126;
          ::dup2(log, 1);
          ::dup2(log, 2);
          return r.prepare();
        },
        o.prepareTimeoutS);
    if (p.timedOut)
      return failed("making its plan took longer than " +
                    llvm::Twine(o.prepareTimeoutS) + " s (--plan-timeout)");
    if (p.status != 0)
      return failed("making its plan failed (exit " + llvm::Twine(p.status) +
                    "; the job's log says why)");
  }
  std::string script = dir + "/job.sbatch";
  if (llvm::Error e = writeScript(r, dir, script))
    return std::move(e);
  std::vector<std::string> argv = {"sbatch",        "--parsable",
                                   "--hold",        "--output=" + r.log,
                                   "--open-mode=append", "--chdir=" + dir,
                                   script};
  ChildResult s = slurm(argv, &r);
  llvm::StringRef id = llvm::StringRef(s.out).trim().split(';').first;
  if (s.status != 0 || id.empty() || !llvm::all_of(id, llvm::isDigit)) {
    // A controller that timed out may still take the submission later
    // (held, it would never run): cancelled once squeue lists it. Not at
    // once: a scancel now would most likely time out too.
    if (s.timedOut)
      orphans.insert(tag + "-" + r.name);
    return failed(s.status == 0 ? "sbatch printed no job id ('" + s.out + "')"
                                : commandError(argv, s, o.timeoutS));
  }
  std::string handle = "slurm:" + id.str();
  if (llvm::Error e = commit(handle)) {
    std::string err;
    if (!run({"scancel", id.str()}, err))
      warn("slurm job " + id + " (held, unrecorded): " + err);
    return std::move(e);
  }
  queue[id.str()] = {"PENDING", "JobHeldUser"};
  release(id.str());
  return handle;
}

void SlurmBackend::release(const std::string &id) {
  std::string err;
  if (run({"scontrol", "release", id}, err)) {
    queue[id].reason = "";
    seen.insert(id);
  } else // the next poll tries again
    warn("slurm job " + id + " is recorded but still held: " + err);
}

bool SlurmBackend::refresh() {
  if (fresh && Clock::now() - taken <
                   std::chrono::duration<double>(o.pollS))
    return answered;
  fresh = true;
  taken = Clock::now();
  std::vector<std::string> argv = {"squeue", "-h", "-o", "%A|%j|%T|%r"};
  ChildResult r = slurm(argv);
  answered = r.status == 0;
  if (!answered) {
    if (!warned)
      warn(commandError(argv, r, o.timeoutS) +
           "; the states of running jobs are unknown until it answers");
    warned = true;
    return false;
  }
  if (warned)
    warn("squeue answers again");
  warned = false;
  queue.clear();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(r.out).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef, 4> f;
    line.split(f, '|');
    if (f.size() != 4 || !f[1].starts_with(tag + "-"))
      continue;
    if (orphans.count(f[1].str()) && f[2] == "PENDING") {
      // Taken by a controller after its sbatch had timed out.
      std::string err;
      if (!run({"scancel", f[0].str()}, err))
        warn("slurm job " + f[0] + " (" + f[1] + ", never recorded): " + err);
      continue;
    }
    queue[f[0].str()] = {f[2].str(), f[3].str()};
  }
  return true;
}

LaunchStatus SlurmBackend::afterQueue(const std::string &id) {
  LaunchStatus unknown;
  unknown.state = LaunchStatus::Running;
  std::vector<std::string> argv = {"scontrol", "show", "job", "-o", id};
  ChildResult r = slurm(argv);
  if (r.status == 0) {
    // A heterogeneous job has a line per component: the first that did
    // not complete says how it ended.
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(r.out).split(lines, '\n', -1, false);
    llvm::StringRef worst;
    for (llvm::StringRef line : lines) {
      llvm::StringRef st = field(line, "JobState");
      if (stillThere(st))
        return unknown;
      if (worst.empty() || (field(worst, "JobState") == "COMPLETED" &&
                            st != "COMPLETED"))
        worst = line;
    }
    if (!worst.empty())
      return endedAs(id, field(worst, "JobState"), field(worst, "ExitCode"),
                     field(worst, "Reason"));
  } else if (!llvm::StringRef(r.err).contains("Invalid job id")) {
    warn("slurm job " + id + ": " + commandError(argv, r, o.timeoutS));
    return unknown;
  }
  // Forgotten by the controller (after MinJobAge): accounting, if kept.
  argv = {"sacct", "-n", "-P", "-X", "-j", id, "-o", "State,ExitCode,Reason"};
  r = slurm(argv);
  llvm::SmallVector<llvm::StringRef, 3> f;
  llvm::StringRef(r.out).trim().split('\n').first.split(f, '|');
  if (r.status == 0 && f.size() == 3 && !f[0].empty()) {
    if (stillThere(f[0]))
      return unknown;
    return endedAs(id, f[0], f[1], f[2]);
  }
  LaunchStatus lost;
  lost.detail = "slurm job " + id +
                " is gone: neither squeue nor scontrol lists it and sacct has "
                "no record" +
                (r.status ? " (" + commandError(argv, r, o.timeoutS) + ")"
                          : std::string());
  return lost;
}

LaunchStatus SlurmBackend::poll(const std::string &handle,
                                const std::string &) {
  llvm::StringRef id = llvm::StringRef(handle);
  LaunchStatus s;
  if (!id.consume_front("slurm:") || id.empty() ||
      !llvm::all_of(id, llvm::isDigit)) {
    s.detail = "'" + handle + "' is not a Slurm job of this backend";
    return s; // Lost
  }
  s.state = LaunchStatus::Running;
  if (!refresh())
    return s;
  auto it = queue.find(id.str());
  if (it == queue.end()) {
    LaunchStatus after = afterQueue(id.str());
    // Not known to have ended: asked again after the next squeue, not at
    // every turn of the loop.
    if (after.state == LaunchStatus::Running)
      queue[id.str()] = {"UNKNOWN", ""};
    return after;
  }
  // Recorded by a service killed before it released the job: released
  // when first seen held. Only then: a hold placed later is someone's
  // decision (scontrol hold), not ours to undo.
  if (!seen.count(id.str()) && it->second.state == "PENDING" &&
      it->second.reason == "JobHeldUser")
    release(id.str());
  else
    seen.insert(id.str());
  return s;
}

void SlurmBackend::stop(const std::string &handle) {
  llvm::StringRef id = llvm::StringRef(handle);
  if (!id.consume_front("slurm:") || id.empty())
    return;
  std::string err;
  if (!run({"scancel", id.str()}, err))
    warn("slurm job " + id + ": " + err + "; it may still run");
  queue.erase(id.str());
}

void SlurmBackend::abandon(const std::string &name) {
  // Attempt names are never reused: whatever carries this one is an
  // orphan, now or when a slow controller gets to it (refresh()).
  orphans.insert(tag + "-" + name);
  std::string err;
  if (!run({"scancel", "--state=PENDING", "--name=" + tag + "-" + name}, err))
    warn("a held slurm job named " + tag + "-" + name +
         " may be left (it never runs): " + err);
}

} // namespace

std::unique_ptr<LaunchBackend>
frenzy::sched::makeSlurmBackend(const SchedCluster &c,
                                const SlurmBackendOptions &o) {
  return std::make_unique<SlurmBackend>(c, o);
}
