//===- LocalBackend.cpp - jobs as process sessions on this machine --------===//
//
// The caller forks a shepherd that first makes itself a session leader and
// then waits for one byte on a pipe: the caller writes it only after
// storing the handle, so a caller killed in between leaves a shepherd that
// reads end-of-file and exits without starting anything. The shepherd
// outlives its caller (a killed service does not take its jobs along),
// runs the job and records its exit status in a file, which is how a later
// caller that is not its parent learns the result. Ranks that mpirun starts
// get process groups of their own but stay in the session, so stopping a
// job ends every process of the session.
//
//===----------------------------------------------------------------------===//
#include "LaunchBackend.h"

#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace frenzy::sched;

namespace {

struct ProcInfo {
  char state = 0;
  long long session = 0;
  unsigned long long start = 0;
};

/// Fields of /proc/PID/stat after the parenthesised command (which may hold
/// spaces): state (3), session (6), start time (22).
std::optional<ProcInfo> procInfo(long long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> f;
  llvm::StringRef(text).substr(close + 2).split(f, ' ');
  ProcInfo p;
  if (f.size() < 20 || f[0].empty() || f[3].getAsInteger(10, p.session) ||
      f[19].getAsInteger(10, p.start))
    return std::nullopt;
  p.state = f[0][0];
  return p;
}

bool parseHandle(llvm::StringRef h, long long &pid, unsigned long long &start) {
  llvm::SmallVector<llvm::StringRef> f;
  h.split(f, ':');
  return f.size() == 3 && f[0] == "local" && !f[1].getAsInteger(10, pid) &&
         pid > 1 && !f[2].getAsInteger(10, start);
}

[[noreturn]] void shepherd(const LaunchRequest &r, int go) {
  char byte;
  if (::read(go, &byte, 1) != 1) // the caller could not record us
    ::_exit(0);
  ::close(go);
  if (r.gid && (::setgroups(0, nullptr) != 0 || ::setgid(*r.gid) != 0))
    ::_exit(126);
  if (r.uid && ::setuid(*r.uid) != 0)
    ::_exit(126);
  for (const auto &[name, value] : r.env)
    ::setenv(name.c_str(), value.c_str(), 1);
  // The job's directory (the log's) is its working directory: the
  // caller's may not be readable by the job's user.
  std::string dir = r.log.substr(0, r.log.rfind('/') + 1);
  if (!dir.empty() && ::chdir(dir.c_str()) != 0)
    ::_exit(126);
  int log = ::open(r.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  int null = ::open("/dev/null", O_RDONLY);
  if (log < 0 || null < 0)
    ::_exit(126);
  ::dup2(null, 0);
  ::dup2(log, 1);
  ::dup2(log, 2);
  ::close(log);
  ::close(null);
  int status = r.prepare ? r.prepare() : 0;
  if (status == 0) {
    std::vector<char *> argv;
    for (const std::string &a : r.argv)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t child = ::fork();
    if (child == 0) {
      ::execv(argv[0], argv.data());
      std::fprintf(stderr, "frenzy-sched: error: cannot run %s: %s\n",
                   argv[0], std::strerror(errno));
      ::_exit(127);
    }
    int ws = 0;
    while (child > 0 && ::waitpid(child, &ws, 0) < 0 && errno == EINTR)
      ;
    status = child < 0                ? 126
             : WIFEXITED(ws)          ? WEXITSTATUS(ws)
             : WIFSIGNALED(ws)        ? 128 + WTERMSIG(ws)
                                      : 126;
  }
  // Written whole, then renamed: a reader sees no status or all of it.
  std::string tmp = r.exitFile + ".tmp";
  if (FILE *f = std::fopen(tmp.c_str(), "w")) {
    std::fprintf(f, "%d\n", status);
    std::fclose(f);
    std::rename(tmp.c_str(), r.exitFile.c_str());
  }
  ::_exit(0);
}

class LocalBackend : public LaunchBackend {
public:
  const char *name() const override { return "local"; }

  llvm::Expected<std::string>
  launch(const LaunchRequest &r,
         llvm::function_ref<llvm::Error(const std::string &)> commit) override {
    int pipeFd[2];
    if (::pipe2(pipeFd, O_CLOEXEC) != 0)
      return llvm::createStringError(std::errc::io_error, "pipe: %s",
                                     std::strerror(errno));
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(pipeFd[0]);
      ::close(pipeFd[1]);
      return llvm::createStringError(std::errc::resource_unavailable_try_again,
                                     "fork: %s", std::strerror(errno));
    }
    if (pid == 0) {
      ::setsid();
      // Nothing of the caller's stays open (its database, its listening
      // socket: a shepherd holding that would answer for a dead service).
      ::dup2(pipeFd[0], 3);
      ::close_range(4, ~0U, 0);
      shepherd(r, 3);
    }
    ::close(pipeFd[0]);
    // The handle needs the start time; the child exists (it waits on the
    // pipe), so /proc has it.
    std::optional<ProcInfo> info = procInfo(pid);
    std::string handle = "local:" + std::to_string(pid) + ":" +
                         std::to_string(info ? info->start : 0);
    llvm::Error e = info ? commit(handle)
                         : llvm::createStringError(std::errc::io_error,
                                                   "/proc/%d/stat unreadable",
                                                   int(pid));
    if (!e && ::write(pipeFd[1], "g", 1) != 1)
      e = llvm::createStringError(std::errc::io_error,
                                  "cannot release the job: %s",
                                  std::strerror(errno));
    ::close(pipeFd[1]);
    if (e) {
      ::waitpid(pid, nullptr, 0); // it exits on the closed pipe
      return std::move(e);
    }
    return handle;
  }

  LaunchStatus poll(const std::string &handle,
                    const std::string &exitFile) override {
    long long pid = 0;
    unsigned long long start = 0;
    LaunchStatus s;
    if (!parseHandle(handle, pid, start))
      return s; // Lost
    // Our own child: reap it (else it would stay a zombie); anybody's
    // else's: ECHILD, harmless.
    ::waitpid(pid_t(pid), nullptr, WNOHANG);
    std::optional<ProcInfo> p = procInfo(pid);
    bool alive = p && p->start == start && p->state != 'Z' && p->state != 'X';
    if (alive) {
      s.state = LaunchStatus::Running;
      return s;
    }
    // Read after the liveness check: a status written just before the
    // exit is seen.
    std::ifstream in(exitFile);
    if (in >> s.exitCode)
      s.state = LaunchStatus::Exited;
    return s;
  }

  void stop(const std::string &handle) override {
    long long pid = 0;
    unsigned long long start = 0;
    if (!parseHandle(handle, pid, start))
      return;
    // Every process of the session that is not older than the job (a
    // session id is the leader's pid, which another process may have had
    // before).
    for (int round = 0; round < 2; ++round) {
      DIR *d = ::opendir("/proc");
      if (!d)
        return;
      while (dirent *e = ::readdir(d)) {
        long long p = 0;
        if (llvm::StringRef(e->d_name).getAsInteger(10, p) || p <= 1)
          continue;
        std::optional<ProcInfo> info = procInfo(p);
        if (info && info->session == pid && info->start >= start)
          ::kill(pid_t(p), SIGKILL);
      }
      ::closedir(d);
    }
    ::waitpid(pid_t(pid), nullptr, WNOHANG);
  }
};

} // namespace

std::unique_ptr<LaunchBackend> frenzy::sched::makeLocalBackend() {
  return std::make_unique<LocalBackend>();
}
