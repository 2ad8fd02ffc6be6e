//===- Supervisor.cpp - keep a training job running as devices come and go ===//
#include "Supervisor.h"

#include "LostRanks.h"
#include "PlanInfo.h"
#include "Processes.h"

#include "plan/CheckpointLatest.h"

#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace frenzy::elastic {

namespace {

volatile std::sig_atomic_t reread = 0, interrupted = 0;
void onHangup(int) { reread = 1; }
void onInterrupt(int sig) { interrupted = sig; }

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char *fmt, ...) {
  std::fputs("frenzy-elastic: ", stdout);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stdout, fmt, ap);
  va_end(ap);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

using frenzy::checkpoint::latestStep;

std::string checkpointText(const ElasticOptions &o) {
  int64_t s = latestStep(o.checkpointDir);
  return s ? "the last checkpoint (step " + std::to_string(s) + " in " +
                 o.checkpointDir + ") is kept"
           : "no checkpoint was written yet";
}

/// A rank's error line that says it could not hear from a peer: its
/// FRENZY_COMM_TIMEOUT ran out, or MPI reported a broken connection.
bool isCommError(const std::string &line) {
  return line.find("(FRENZY_COMM_TIMEOUT)") != std::string::npos ||
         (line.find(": MPI_") != std::string::npos &&
          line.find(" failed: ") != std::string::npos);
}

/// frenzy-launch's line for a node its probe found unreachable (HostLaunch.cpp).
const std::regex &probeFailure() {
  static const std::regex line("^frenzy-launch: error: node '([^']+)' (.*)");
  return line;
}

std::string hostName() {
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  return host;
}

/// A cluster file's identity: a change of any of these is a change.
std::string fileStamp(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return "missing";
  return std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_size) +
         ":" + std::to_string(st.st_ino);
}

/// How one run of the ranks ended.
struct Outcome {
  enum Kind { Done, Lost, Shrunk, Joined, Failed } kind = Failed;
  std::string what;     // for the log (or the error line)
  double detected = 0;  // when the change was seen
  double stopped = 0;   // when the ranks were all gone
  int64_t lastStep = 0; // the furthest step the job reached
  Loss loss;            // Lost
  Membership next;      // Shrunk, Joined
};

class Supervisor {
public:
  explicit Supervisor(const ElasticOptions &o) : o(o) {}
  int run();

private:
  PlanInfo plan(const Membership &m, int generation, const char *verb);
  Outcome watch(int generation, const PlanInfo &info, bool resuming);
  /// After the job was stopped on a rank's death or communication error:
  /// what was lost (LostRanks.h), or Failed with `errorLine`.
  Outcome postMortem(Outcome out, const PlanInfo &info,
                     const std::string &statusDir, int deadRank, int signalled,
                     const std::string &errorLine);
  /// Reads the cluster file again when it changed (or on SIGHUP): the new
  /// membership, or nothing when it is unchanged or unreadable.
  std::optional<Membership> poll(bool force);

  const ElasticOptions &o;
  /// Called with the first step a (re)started job reports.
  std::function<void(int64_t)> firstStepHook;
  /// The cluster file as last read well: derived files are made from it
  /// (an edit half-saved when a re-plan starts cannot spoil one).
  std::optional<ClusterFile> file;
  Membership fileMembership, active;
  std::map<std::string, int> lost; // devices lost per node since the file
  std::string stamp;
  std::string badStamp; // a stamp whose file could not be read (warned)
};

std::optional<Membership> Supervisor::poll(bool force) {
  std::string s = fileStamp(o.cluster);
  if (!force && s == stamp)
    return std::nullopt;
  try {
    file = ClusterFile::read(o.cluster);
    stamp = s;
    fileMembership = file->membership();
    // The file is the user's word on what is present: what it lists counts
    // as there, devices lost before included.
    lost.clear();
    return fileMembership;
  } catch (const ElasticError &e) {
    if (s != badStamp)
      std::fprintf(stderr, "frenzy-elastic: warning: %s; keeping %s\n",
                   e.what(), describe(active).c_str());
    badStamp = s;
    return std::nullopt;
  }
}

PlanInfo Supervisor::plan(const Membership &m, int generation,
                          const char *verb) {
  std::string g = std::to_string(generation);
  std::string clusterPath = o.runDir + "/cluster-" + g + ".yaml";
  std::string planPath = o.runDir + "/plan-" + g + ".bin";
  {
    std::ofstream out(clusterPath);
    out << "# Written by frenzy-elastic from " << o.cluster
        << ": the devices present now, " << describe(m) << ".\n"
        << file->derive(m);
    if (!out)
      throw ElasticError(clusterPath + ": cannot write the derived cluster "
                                       "file");
  }
  std::vector<std::string> argv = {o.frenzyOpt, o.model,
                                   "--cluster=" + clusterPath};
  argv.insert(argv.end(), o.planOptions.begin(), o.planOptions.end());
  argv.insert(argv.end(), {"-o", planPath});
  std::remove(planPath.c_str());
  RunResult r = runWithTimeout(argv, o.planTimeout);
  if (r.timedOut || r.status != 0) {
    std::string why;
    if (r.timedOut) {
      why = "frenzy-opt did not finish within " +
            std::to_string(int(o.planTimeout)) + " s (--plan-timeout)";
    } else {
      std::stringstream err(r.err);
      for (std::string l; std::getline(err, l);)
        if (!l.empty() &&
            (why.empty() || l.find("error") != std::string::npos)) {
          why = l;
          if (l.find("error") != std::string::npos)
            break;
        }
      if (why.empty())
        why = "frenzy-opt exited with status " + std::to_string(r.status);
    }
    throw ElasticError(std::string(verb) + " for " + describe(m) + " (" +
                       clusterPath + ") failed: " + why + "; " +
                       checkpointText(o));
  }
  PlanInfo info = PlanInfo::read(planPath);
  say("planned in %.2f s for %s: %s", r.seconds, describe(m).c_str(),
      info.layout.c_str());
  return info;
}

Outcome Supervisor::watch(int generation, const PlanInfo &info, bool resuming) {
  std::string g = std::to_string(generation);
  std::string statusDir = o.runDir + "/ranks-" + g;
  std::string stopFile = o.runDir + "/stop";
  std::remove(stopFile.c_str());
  std::vector<std::string> argv = {o.frenzyLaunch,
                                   info.path,
                                   "--data=" + o.data,
                                   "--steps=" + std::to_string(o.steps),
                                   "--checkpoint-dir=" + o.checkpointDir,
                                   "--checkpoint-every=" +
                                       std::to_string(o.checkpointEvery),
                                   "--status-dir=" + statusDir,
                                   "--stop-file=" + stopFile};
  if (resuming)
    argv.push_back("--resume=" + o.checkpointDir);
  argv.insert(argv.end(), o.launchOptions.begin(), o.launchOptions.end());
  Child job(argv);

  static const std::regex stepLine("^step\\s+([0-9]+)/");
  static const std::regex stoppedLine("^stopped after the checkpoint of step "
                                      "([0-9]+)");
  static const std::regex rankDied(
      "process rank ([0-9]+) with PID [0-9]+ on node \\S+ exited on signal "
      "([0-9]+)");
  const std::string me = hostName();
  Outcome out;
  double lastProgress = now(), lastStatusPoll = 0, lastFilePoll = now();
  int64_t stoppedAt = 0;
  int deadRank = -1, signalled = 0;
  double deadAt = 0;
  // A rank that ended on its own error (status `failed`): the deaths that
  // follow are mpirun ending the others, not lost devices.
  double failedAt = 0;
  std::string errorLine;
  double errorAt = 0;
  std::optional<Membership> joining;
  double joinAt = 0;
  std::map<int, int64_t> rankSteps;
  int status = 0;
  auto finish = [&](Outcome::Kind k) {
    out.kind = k;
    out.stopped = now();
    return out;
  };
  // Forwards the job's lines and notes what they say.
  auto pump = [&](int ms) {
    for (auto &[isErr, line] : job.readLines(ms)) {
      std::fprintf(isErr ? stderr : stdout, "%s\n", line.c_str());
      std::smatch m;
      if (!isErr && std::regex_search(line, m, stepLine)) {
        out.lastStep = std::max<int64_t>(out.lastStep, std::stoll(m[1]));
        lastProgress = now();
        if (firstStepHook) {
          firstStepHook(std::stoll(m[1]));
          firstStepHook = nullptr;
        }
      } else if (!isErr && std::regex_search(line, m, stoppedLine)) {
        stoppedAt = std::stoll(m[1]);
      } else if (isErr && std::regex_search(line, m, rankDied)) {
        int r = std::stoi(m[1]);
        if (deadRank < 0 && r >= 0 && r < int(info.rankNode.size())) {
          deadRank = r;
          deadAt = now();
        }
        signalled = std::stoi(m[2]);
      } else if (isErr && errorLine.empty() &&
                 line.rfind("frenzy-launch", 0) == 0 &&
                 line.find("error:") != std::string::npos) {
        errorLine = line;
        errorAt = now();
      }
    }
    std::fflush(stdout);
    std::fflush(stderr);
  };
  while (true) {
    bool over = job.exited(&status);
    pump(over ? 0 : 50);
    if (over)
      break;
    double t = now();
    // A rank whose process is gone while the job still runs is lost (a
    // pid on this machine is checked; mpirun reports the others).
    // (At once after mpirun's report: a `failed` rank must be seen first.)
    if (t - lastStatusPoll > 0.05 || (deadRank >= 0 && !failedAt)) {
      lastStatusPoll = t;
      for (size_t r = 0; r < info.rankNode.size(); ++r) {
        auto s = readRankState(statusDir + "/rank-" + std::to_string(r));
        if (!s)
          continue;
        if (s->step > rankSteps[int(r)]) {
          rankSteps[int(r)] = s->step;
          out.lastStep = std::max(out.lastStep, s->step);
          lastProgress = t;
        }
        if (s->state == "failed" && !failedAt)
          failedAt = t;
        if (deadRank < 0 && s->host == me &&
            (s->state == "running" || s->state == "starting") &&
            !processAlive(s->pid)) {
          deadRank = int(r);
          deadAt = t;
        }
      }
    }
    // A rank's failure to hear from a peer (its timeout, an MPI error) may
    // be a node that is gone: found out once the job is stopped.
    bool commError =
        isCommError(errorLine) || std::regex_search(errorLine, probeFailure());
    if ((deadRank >= 0 && !failedAt && !(errorAt > 0 && errorAt < deadAt)) ||
        commError) {
      // Lost: mpirun would end the others too, after a second or so (and
      // never, when a node's link is cut): ending them now is what makes
      // the restart quick.
      out.detected = deadRank >= 0 && (!commError || deadAt < errorAt)
                         ? deadAt
                         : errorAt;
      job.stop(o.stopGrace);
      pump(0);
      return postMortem(out, info, statusDir, deadRank, signalled, errorLine);
    }
    if (failedAt && t - failedAt > o.stopGrace) {
      // mpirun ends a job whose rank failed by itself; this one did not.
      job.stop(o.stopGrace);
      pump(0);
      out.what = "a rank failed (not a lost device, so not re-planned): " +
                 (errorLine.empty() ? std::string("see its output above")
                                    : errorLine) +
                 "; " + checkpointText(o);
      return finish(Outcome::Failed);
    }
    if (interrupted) {
      job.stop(o.stopGrace);
      out.what = std::string("interrupted (signal ") +
                 std::to_string(int(interrupted)) + "); " + checkpointText(o);
      return finish(Outcome::Failed);
    }
    if (t - lastFilePoll > 0.25 || reread) {
      lastFilePoll = t;
      bool force = reread;
      reread = 0;
      if (std::optional<Membership> m = poll(force)) {
        bool grew, shrank;
        std::string d = difference(active, *m, &grew, &shrank);
        std::string src = force ? "signal: " + o.cluster + " read again"
                                : o.cluster + " changed";
        if (shrank) {
          out.detected = t;
          out.next = *m;
          out.what = src + " (" + d + ")";
          job.stop(o.stopGrace);
          return finish(Outcome::Shrunk);
        }
        if (grew) {
          joining = *m;
          joinAt = t;
          std::ofstream(stopFile) << "join\n";
          say("join: %s (%s): %s; stopping after the next checkpoint",
              src.c_str(), d.c_str(), describe(*m).c_str());
        } else if (joining) {
          // Back to the running devices before the boundary: carry on.
          joining.reset();
          std::remove(stopFile.c_str());
          say("%s: back to %s; carrying on", src.c_str(), describe(*m).c_str());
        }
      }
    }
    if (t - lastProgress > o.stallTimeout) {
      job.stop(o.stopGrace);
      out.what = "no step for " + std::to_string(int(o.stallTimeout)) +
                 " s (--stall-timeout); stopped the ranks; " +
                 checkpointText(o);
      return finish(Outcome::Failed);
    }
  }
  // The job ended by itself.
  job.stop(0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (stoppedAt > 0) {
      // A join called off after the ranks had seen the stop file still
      // stopped them: the job goes on with the devices it had.
      out.detected = joining ? joinAt : now();
      out.next = joining ? *joining : active;
      out.what =
          "stopped after the checkpoint of step " + std::to_string(stoppedAt);
      return finish(Outcome::Joined);
    }
    if (joining)
      say("join: the last step came before the next checkpoint; %s not used",
          describe(*joining).c_str());
    return finish(Outcome::Done);
  }
  if ((deadRank >= 0 && !failedAt && !(errorAt > 0 && errorAt < deadAt)) ||
      isCommError(errorLine) || std::regex_search(errorLine, probeFailure())) {
    out.detected = deadRank >= 0 ? deadAt : errorAt;
    return postMortem(out, info, statusDir, deadRank, signalled, errorLine);
  }
  if (info.rankNode.size() == 1 && WIFSIGNALED(status) && errorLine.empty()) {
    // One rank, no mpirun: the child is the rank.
    out.detected = now();
    out.loss.plan = &info;
    out.loss.ranks = {0};
    out.what = out.loss.describe(info, WTERMSIG(status)) + " after step " +
               std::to_string(out.lastStep);
    return finish(Outcome::Lost);
  }
  out.what = errorLine.empty()
                 ? "the ranks ended with " +
                       std::string(
                           WIFEXITED(status)
                               ? "status " + std::to_string(WEXITSTATUS(status))
                               : "signal " + std::to_string(WTERMSIG(status))) +
                       " and no rank was lost (see their output above)"
                 : "a rank failed (not a lost device, so not re-planned): " +
                       errorLine;
  out.what += "; " + checkpointText(o);
  return finish(Outcome::Failed);
}

Outcome Supervisor::postMortem(Outcome out, const PlanInfo &info,
                               const std::string &statusDir, int deadRank,
                               int signalled, const std::string &errorLine) {
  out.loss.plan = &info;
  std::smatch m;
  if (!errorLine.empty() && !isCommError(errorLine) &&
      !std::regex_search(errorLine, probeFailure())) {
    // A rank that ended on its own error (its line may come through mpirun
    // after its pid is gone) is not a lost device: re-planning would only
    // meet the error again.
  } else if (std::regex_search(errorLine, m, probeFailure())) {
    // frenzy-launch's own probe, before mpirun, named the node.
    out.loss.unreachable = {{m[1].str(), m[2].str()}};
  } else {
    out.loss.ranks = silentRanks(statusDir, info.rankNode.size());
    // A peer that stopped answering may be a node whose link is cut: its
    // ranks may have said `failed` (their own timeout) or nothing (their
    // status files out of reach), so the nodes are asked.
    if (info.namesHosts && isCommError(errorLine))
      out.loss.unreachable = probeNodes(o.frenzyLaunch, info.path,
                                        o.launchOptions, o.launchTimeout);
  }
  // mpirun's report without a status file to say so (a rank that died
  // before its first update).
  if (out.loss.ranks.empty() && out.loss.unreachable.empty() && deadRank >= 0 &&
      (errorLine.empty() || isCommError(errorLine)))
    out.loss.ranks = {deadRank};
  out.stopped = now();
  if (out.loss.ranks.empty() && out.loss.unreachable.empty()) {
    out.kind = Outcome::Failed;
    out.what = "a rank failed (not a lost device, so not re-planned): " +
               (errorLine.empty() ? std::string("see its output above")
                                  : errorLine) +
               "; " + checkpointText(o);
    return out;
  }
  out.kind = Outcome::Lost;
  int64_t reached = out.lastStep;
  out.what = out.loss.describe(info, signalled) + " after step " +
             std::to_string(reached);
  if (!out.loss.unreachable.empty() && isCommError(errorLine)) {
    // The rank's own words, without the launcher's prefix and suffix.
    static const std::regex said("error: (rank [0-9]+: .*\\(FRENZY_COMM_"
                                 "TIMEOUT\\))");
    std::smatch m;
    out.what += " (found when " +
                (std::regex_search(errorLine, m, said) ? m[1].str()
                                                       : errorLine) +
                ")";
  }
  return out;
}

int Supervisor::run() {
  std::signal(SIGHUP, onHangup);
  std::signal(SIGUSR1, onHangup);
  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
  ::mkdir(o.runDir.c_str(), 0755);
  struct stat st;
  if (::stat(o.runDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw ElasticError(o.runDir + ": cannot create the run directory "
                                  "(--run-dir)");
  stamp = fileStamp(o.cluster);
  file = ClusterFile::read(o.cluster);
  fileMembership = file->membership();
  active = fileMembership;
  if (deviceCount(active) == 0)
    throw ElasticError(o.cluster + ": lists no devices; add a node");
  int generation = 0;
  PlanInfo current = plan(active, generation, "planning");
  int64_t resumeFrom = latestStep(o.checkpointDir);
  say("start: %s; %s; predicted %s%s", describe(active).c_str(),
      current.layout.c_str(),
      tokensText(current.predictedTokensPerSecond()).c_str(),
      resumeFrom ? ("; resuming from the checkpoint of step " +
                    std::to_string(resumeFrom) + " in " + o.checkpointDir)
                       .c_str()
                 : "");
  int leaves = 0, joins = 0;
  while (true) {
    Outcome out = watch(generation, current, resumeFrom > 0);
    if (out.kind == Outcome::Done) {
      say("done: %" PRId64 " steps; %d leave%s, %d join%s", o.steps, leaves,
          leaves == 1 ? "" : "s", joins, joins == 1 ? "" : "s");
      return 0;
    }
    if (out.kind == Outcome::Failed)
      throw ElasticError(out.what);
    Membership next;
    std::string what;
    if (out.kind == Outcome::Lost) {
      for (auto &[node, n] : out.loss.devices(current, fileMembership))
        lost[node] += n;
      next = without(fileMembership, lost);
      what = "leave: " + out.what;
      ++leaves;
    } else {
      next = out.next;
      what = std::string(out.kind == Outcome::Joined ? "join: " : "leave: ") +
             out.what;
      ++(out.kind == Outcome::Joined ? joins : leaves);
    }
    if (leaves + joins > o.maxRestarts)
      throw ElasticError("more than " + std::to_string(o.maxRestarts) +
                         " re-plans (--max-restarts); stopping; " +
                         checkpointText(o));
    if (deviceCount(next) == 0)
      throw ElasticError(o.cluster + ": no devices left (" + what +
                         "); add a node to the cluster file and run "
                         "frenzy-elastic again to resume; " +
                         checkpointText(o));
    int64_t ck = latestStep(o.checkpointDir);
    say("%s; devices now %s; %" PRId64 " step%s lost (step %" PRId64
        " reached; %s)",
        what.c_str(), describe(next).c_str(),
        std::max<int64_t>(0, out.lastStep - ck),
        out.lastStep - ck == 1 ? "" : "s", out.lastStep,
        ck ? ("last checkpoint: step " + std::to_string(ck)).c_str()
           : "no checkpoint yet: the job starts again from step 1");
    double before = current.predictedTokensPerSecond();
    PlanInfo replanned = plan(next, ++generation, "re-planning");
    double planned = now();
    say("re-planned: predicted %s -> %s", tokensText(before).c_str(),
        tokensText(replanned.predictedTokensPerSecond()).c_str());
    current = replanned;
    active = next;
    resumeFrom = ck;
    firstStepHook = [out, planned](int64_t step) {
      double t = now();
      say("resumed: step %" PRId64 " ran %.2f s after the detection (%s "
          "%.2f s, re-planning %.2f s, restart and first step %.2f s)",
          step, t - out.detected,
          out.kind == Outcome::Joined ? "to the checkpoint and stop"
                                      : "stopping",
          out.stopped - out.detected, planned - out.stopped, t - planned);
    };
  }
}

} // namespace

int supervise(const ElasticOptions &o) {
  try {
    return Supervisor(o).run();
  } catch (const ElasticError &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "frenzy-elastic: error: %s\n", e.what());
    return 1;
  }
}

} // namespace frenzy::elastic
