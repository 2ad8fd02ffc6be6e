//===- HostLaunch.cpp - start a plan's ranks on its nodes' hosts through Open MPI -===//
//
// A plan whose nodes name hosts (`host:` in the cluster file) runs its ranks
// there: mpirun with a hostfile of one line per rank in plan order, read by
// Open MPI's sequential mapper (rmaps seq), so that MPI rank r is plan rank r
// on its node even when a node's ranks are not consecutive (pipelines that
// cross the same nodes). Remote daemons start through the launch agent
// (Open MPI's plm_rsh_agent: ssh by default, the netns agent on emulated
// nodes). Before mpirun, every node runs this program's probe through the
// same agent, in parallel and within --launch-timeout, and the probe
// connects back (ProbeBack.h): a host that does not answer, lacks the
// program, or cannot reach this machine is then one line naming its node,
// not an Open MPI daemon that never calls back.
//
//===----------------------------------------------------------------------===//
#include "HostLaunch.h"

#include "Comm.h"

#include "ProbeBack.h"
#include "Processes.h"
#include "Tensor.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace frenzy::rt {

using elastic::descendants;

bool planNamesHosts(const plan::Plan &p) {
  for (const plan::NodeHost &n : p.nodes())
    if (!n.host().empty())
      return true;
  return false;
}

std::string hostOfNode(const plan::Plan &p, const std::string &node) {
  for (const plan::NodeHost &n : p.nodes())
    if (n.name() == node)
      return n.host();
  return "";
}

namespace {

/// The agent the user chose, else Open MPI's default remote shell.
std::string agentOf(const Options &o) {
  return o.launchAgent.empty() ? "ssh" : o.launchAgent;
}

/// Starts `sh -c SCRIPT sh ARGS...` in a process group of its own (so that a
/// hung agent and everything it started can be ended together), stdin from
/// /dev/null, stdout and stderr to `log`.
pid_t spawnShell(const std::string &script, const std::vector<std::string> &args,
                 const std::string &log) {
  pid_t pid = fork();
  if (pid != 0) {
    // Also here: a kill of the group right after the fork finds it.
    if (pid > 0)
      setpgid(pid, pid);
    return pid;
  }
  setpgid(0, 0);
  int in = open("/dev/null", O_RDONLY);
  int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (in >= 0)
    dup2(in, 0);
  if (out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
  std::vector<const char *> argv = {"sh", "-c", script.c_str(), "sh"};
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  argv.push_back(nullptr);
  execv("/bin/sh", const_cast<char **>(argv.data()));
  _exit(127);
}

std::string lastLine(const std::string &path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      last = line;
  return printable(last);
}

/// Every node of the plan runs the probe through the agent within the
/// timeout: one message per node that does not, naming it (node order).
std::vector<std::pair<std::string, std::string>>
probeNodes(const Options &o, const plan::Plan &p, const std::string &dir,
           const std::string &self) {
  ProbeListener listener(p);
  struct Probe {
    std::string node, host, log;
    pid_t pid = -1;
    int status = -1; // waitpid status once done
  };
  std::vector<Probe> probes;
  for (const plan::NodeHost &n : p.nodes()) {
    bool used = false;
    for (const plan::Rank &r : p.ranks())
      used |= r.node() == n.name();
    if (!used)
      continue;
    Probe &pr = probes.emplace_back();
    pr.node = n.name();
    pr.host = n.host();
    pr.log = dir + "/probe-" + std::to_string(probes.size()) + ".log";
    // The agent is a command line (a program and its options), as Open
    // MPI's plm_rsh_agent is: the shell splits it. The remote command goes
    // to the node's shell as one string (as ssh passes it): quoted for it.
    pr.pid = spawnShell(agentOf(o) + " \"$1\" \"'$2' '$3'\"",
                        {pr.host, self, listener.argument}, pr.log);
    if (pr.pid < 0)
      throw RuntimeError("cannot start the launch agent for node '" +
                         pr.node + "': fork failed");
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::seconds(o.launchTimeout);
  size_t pending = probes.size();
  while (pending > 0 && std::chrono::steady_clock::now() < deadline) {
    for (Probe &pr : probes) {
      int st = 0;
      if (pr.status < 0 && waitpid(pr.pid, &st, WNOHANG) == pr.pid) {
        pr.status = st;
        --pending;
      }
    }
    if (pending > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::pair<std::string, std::string>> failures;
  for (Probe &pr : probes) {
    std::string error;
    if (pr.status < 0) {
      kill(-pr.pid, SIGKILL);
      waitpid(pr.pid, nullptr, 0);
      error = "node '" + pr.node + "' (host " + pr.host +
                ") did not answer through the launch agent '" + agentOf(o) +
                "' within " + std::to_string(o.launchTimeout) +
                " s (--launch-timeout=SECONDS)";
    } else if (WIFEXITED(pr.status) &&
               WEXITSTATUS(pr.status) == kProbeUnreachable) {
      error = "node '" + pr.node + "' (host " + pr.host +
              ") answered but cannot reach this machine over TCP (tried " +
              listener.addresses + "): Open MPI's daemons there could not "
              "call back (a link down or a firewall?)";
    } else if (!(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0)) {
      std::string why = lastLine(pr.log);
      error = "node '" + pr.node + "' (host " + pr.host +
              ") does not answer: the launch agent '" + agentOf(o) +
              "' failed (" +
              (WIFEXITED(pr.status)
                   ? "exit " + std::to_string(WEXITSTATUS(pr.status))
                   : "signal " + std::to_string(WTERMSIG(pr.status))) +
              ")" + (why.empty() ? "" : ": " + why);
    }
    if (!error.empty())
      failures.push_back({pr.node, error});
  }
  return failures;
}

/// A directory of this launch's own (the hostfile, the probes' logs),
/// removed with it.
struct LaunchDir {
  std::string path;
  LaunchDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string base =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/frenzy-launch.XXXXXX";
    std::vector<char> buf(base.begin(), base.end());
    buf.push_back(0);
    if (!mkdtemp(buf.data()))
      throw RuntimeError("cannot make a directory for the hostfile in " + base);
    path = buf.data();
  }
  ~LaunchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::string selfPath() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    throw RuntimeError("cannot find this program's path to start its ranks");
  return std::string(self, size_t(n));
}

/// How long mpirun gets to end the job after a rank's error: Open MPI 4.1's
/// abort waits for every daemon to confirm, and one on a node whose link
/// went down never does (measured: still waiting after 90 s). A reachable
/// job ends within a second or two; the user's comm timeout, when shorter
/// than 10 s, says how long is too long (never under 3 s).
int abortGraceSeconds() {
  return int(std::clamp(commTimeoutSeconds(), 3.0, 10.0));
}

/// mpirun's stderr bytes to ours (a stderr that is gone has no reader to
/// tell).
void passOn(const char *buf, ssize_t n) {
  ssize_t written = write(2, buf, size_t(n));
  (void)written;
}

/// Runs mpirun with its stderr passed through this process, which reads it
/// for a rank's error (the line MultiRank.cpp prints before MPI_Abort). A
/// job that has not ended abortGraceSeconds() after it is ended here: mpirun
/// and every process below it (its daemons' launch agents). Returns mpirun's
/// exit status, or -1 when it had to be ended.
int runMpirun(std::vector<std::string> args) {
  int err[2];
  if (pipe(err) != 0)
    throw RuntimeError("cannot start mpirun: pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(err[1], 2);
    close(err[0]);
    close(err[1]);
    std::vector<char *> cargs;
    for (std::string &a : args)
      cargs.push_back(a.data());
    cargs.push_back(nullptr);
    execvp("mpirun", cargs.data());
    std::fprintf(stderr, "frenzy-launch: error: cannot run mpirun (install "
                         "Open MPI: apt-get install openmpi-bin)\n");
    _exit(127);
  }
  close(err[1]);
  if (pid < 0)
    throw RuntimeError("cannot start mpirun: fork failed");
  // mpirun is in our process group: a ^C reaches it and its ranks directly.
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> abortAt;
  const auto grace = std::chrono::seconds(abortGraceSeconds());
  std::string line;
  int status = 0;
  bool open = true;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (abortAt && Clock::now() - *abortAt > grace) {
      std::vector<pid_t> below = descendants(pid);
      kill(pid, SIGTERM);
      for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      kill(pid, SIGKILL);
      for (pid_t q : descendants(pid))
        below.push_back(q);
      for (pid_t q : below)
        kill(q, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      close(err[0]);
      return -1;
    }
    if (!open) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    pollfd pf = {err[0], POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0)
      continue;
    char buf[4096];
    ssize_t n = read(err[0], buf, sizeof buf);
    if (n <= 0) {
      open = n < 0 && errno == EINTR;
      continue;
    }
    passOn(buf, n);
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        line += buf[i];
        continue;
      }
      if (!abortAt && (line.find("; ending all ranks") != std::string::npos ||
                       line.find("MPI_ABORT was invoked") != std::string::npos))
        abortAt = Clock::now();
      line.clear();
    }
  }
  // What mpirun wrote last (it has exited; its daemons' output may follow).
  char buf[4096];
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;)
    passOn(buf, n);
  close(err[0]);
  return status;
}

} // namespace

std::vector<std::pair<std::string, std::string>>
unreachableNodes(const Options &o, const plan::Plan &p) {
  LaunchDir dir;
  return probeNodes(o, p, dir.path, selfPath());
}

int launchOnHosts(const Options &o, const plan::Plan &p) {
  for (const plan::Rank &r : p.ranks())
    if (hostOfNode(p, r.node()).empty())
      throw RuntimeError("rank " + std::to_string(r.id()) + "'s node '" +
                         r.node() + "' names no host in the plan; give every "
                         "node of the cluster file a 'host:'");
  LaunchDir launchDir;
  const std::string &dir = launchDir.path;
  std::string self = selfPath();
  auto failures = probeNodes(o, p, dir, self);
  if (!failures.empty())
    throw RuntimeError(failures[0].second);
  // A rank waits for a peer at most this long (Comm.h), so that a link that
  // drops mid-step ends the job instead of hanging it; given to every rank
  // (-x: an environment variable does not travel through ssh).
  if (!std::getenv("FRENZY_COMM_TIMEOUT"))
    setenv("FRENZY_COMM_TIMEOUT", std::to_string(kHostCommTimeout).c_str(), 1);
  // One line per rank, in plan order: rmaps seq puts rank r on line r.
  std::string hostfile = dir + "/hostfile";
  {
    std::ofstream out(hostfile);
    for (const plan::Rank &r : p.ranks())
      out << hostOfNode(p, r.node()) << "\n";
    if (!out)
      throw RuntimeError(hostfile + ": cannot write the hostfile");
  }
  std::vector<std::string> args = {
      "mpirun", "-np", std::to_string(p.ranks_size()), "--hostfile", hostfile,
      "--mca", "rmaps", "seq", "--oversubscribe", "--bind-to", "none",
      // Only this machine starts daemons: with tree spawn the first
      // daemons would start the others, and every node would need the
      // agent (ssh keys) to every other node.
      "--mca", "plm_rsh_no_tree_spawn", "1", "-x", "FRENZY_COMM_TIMEOUT"};
  if (!o.launchAgent.empty())
    args.insert(args.end(), {"--mca", "plm_rsh_agent", o.launchAgent});
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  args.push_back(self);
  args.insert(args.end(), o.argv.begin(), o.argv.end());

  std::map<std::string, int> perNode;
  for (const plan::Rank &r : p.ranks())
    ++perNode[r.node()];
  // frenzy-calibrate --cluster starts its ranks here too: its own name.
  std::printf("%s: starting %d ranks on %zu nodes (",
              program_invocation_short_name, p.ranks_size(), perNode.size());
  bool first = true;
  for (const plan::NodeHost &node : p.nodes())
    if (perNode.count(node.name())) {
      std::printf("%s%s: %s x%d", first ? "" : ", ", node.name().c_str(),
                  node.host().c_str(), perNode[node.name()]);
      first = false;
    }
  std::printf("):");
  // Quoted where the shell would split, so the line can be run by hand.
  for (const std::string &a : args)
    std::printf(a.find_first_of(" \t'\"$") == std::string::npos ? " %s"
                                                                 : " '%s'",
                a.c_str());
  std::printf("\n");
  std::fflush(stdout);

  int status = runMpirun(args);
  if (status == -1) {
    // Which node mpirun could not reach: the probe says (bounded by
    // --launch-timeout).
    std::string why = "after a rank's error mpirun did not end the job within " +
                      std::to_string(abortGraceSeconds()) +
                      " s: ended mpirun and the processes it started here";
    failures = probeNodes(o, p, dir, self);
    throw RuntimeError(failures.empty() ? why
                                        : failures[0].second + "; " + why +
                                              " (Open MPI cannot reach that "
                                              "node to end its ranks)");
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

} // namespace frenzy::rt
