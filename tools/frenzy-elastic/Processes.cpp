//===- Processes.cpp - children with timeouts, process trees --------------===//
#include "Processes.h"

#include "Membership.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace frenzy::elastic {

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

pid_t spawn(const std::vector<std::string> &argv, int fds[2]) {
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0)
    throw ElasticError(std::string("cannot create a pipe: ") +
                       std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0)
    throw ElasticError(std::string("cannot start ") + argv[0] + ": " +
                       std::strerror(errno));
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]), ::close(out[1]), ::close(err[0]), ::close(err[1]);
    // SIGHUP and friends go to the supervisor, not to its job.
    ::setpgid(0, 0);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "frenzy-elastic: error: cannot run %s: %s\n", args[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]), ::close(err[1]);
  fds[0] = out[0], fds[1] = err[0];
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  return pid;
}

} // namespace

std::vector<pid_t> descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  if (DIR *d = ::opendir("/proc")) {
    while (dirent *e = ::readdir(d)) {
      char *end;
      long p = std::strtol(e->d_name, &end, 10);
      if (*end || p <= 0)
        continue;
      std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
      std::string s((std::istreambuf_iterator<char>(stat)), {});
      size_t paren = s.rfind(')');
      if (paren == std::string::npos)
        continue;
      char state;
      long ppid;
      if (std::sscanf(s.c_str() + paren + 1, " %c %ld", &state, &ppid) == 2)
        children.insert({pid_t(ppid), pid_t(p)});
    }
    ::closedir(d);
  }
  std::vector<pid_t> out, todo = {root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto [b, e] = children.equal_range(p);
    for (auto it = b; it != e; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

bool processAlive(pid_t pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno == ESRCH))
    return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(stat)), {});
  size_t paren = s.rfind(')');
  return paren == std::string::npos || s.size() < paren + 3 ||
         s[paren + 2] != 'Z';
}

std::string besideSelf(const std::string &name) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, size_t(n));
    std::string path = dir.substr(0, dir.rfind('/') + 1) + name;
    if (::access(path.c_str(), X_OK) == 0)
      return path;
  }
  return name;
}

bool findProgram(const std::string &program) {
  auto runnable = [](const std::string &p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos)
    return runnable(program);
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t b = 0; b <= dirs.size();) {
    size_t e = dirs.find(':', b);
    if (e == std::string::npos)
      e = dirs.size();
    std::string dir = e > b ? dirs.substr(b, e - b) : ".";
    if (runnable(dir + "/" + program))
      return true;
    b = e + 1;
  }
  return false;
}

RunResult runWithTimeout(const std::vector<std::string> &argv, double timeout) {
  RunResult r;
  double t0 = now();
  Child c(argv);
  int status = 0;
  while (true) {
    for (auto &[isErr, line] : c.readLines(50))
      (isErr ? r.err : r.out) += line + "\n";
    if (c.exited(&status))
      break;
    if (now() - t0 > timeout) {
      r.timedOut = true;
      c.stop(2);
      break;
    }
  }
  for (auto &[isErr, line] : c.readLines(0))
    (isErr ? r.err : r.out) += line + "\n";
  if (!r.timedOut && WIFEXITED(status))
    r.status = WEXITSTATUS(status);
  r.seconds = now() - t0;
  return r;
}

Child::Child(const std::vector<std::string> &argv) { id = spawn(argv, fds); }

Child::~Child() {
  if (!reaped)
    stop(2);
  for (int fd : fds)
    if (fd >= 0)
      ::close(fd);
}

std::vector<std::pair<bool, std::string>> Child::readLines(int ms) {
  std::vector<std::pair<bool, std::string>> lines;
  pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
  if (::poll(p, 2, ms) <= 0)
    return lines;
  for (int k = 0; k < 2; ++k) {
    if (fds[k] < 0 || !(p[k].revents & (POLLIN | POLLHUP)))
      continue;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fds[k], buf, sizeof buf)) > 0)
      partial[k].append(buf, size_t(n));
    size_t nl;
    while ((nl = partial[k].find('\n')) != std::string::npos) {
      lines.push_back({k == 1, partial[k].substr(0, nl)});
      partial[k].erase(0, nl + 1);
    }
    if (n == 0) { // every writer closed it: no more lines ever
      ::close(fds[k]);
      fds[k] = -1;
      if (!partial[k].empty()) // a last line without its newline
        lines.push_back({k == 1, partial[k]});
      partial[k].clear();
    }
  }
  return lines;
}

bool Child::exited(int *status) {
  if (!reaped) {
    pid_t r = ::waitpid(id, &waitStatus, WNOHANG);
    reaped = r == id || (r < 0 && errno == ECHILD);
  }
  *status = waitStatus;
  return reaped;
}

void Child::stop(double grace) {
  int status;
  // Every process of the job is asked to end, not only mpirun: a rank that
  // is stopped or busy must not outlive the supervisor's decision (and
  // write further checkpoints). Checkpoints are written atomically, so an
  // end at any moment leaves the last complete one as it was.
  std::vector<pid_t> tree = descendants(id);
  if (!exited(&status))
    ::kill(id, SIGTERM);
  for (pid_t p : tree)
    ::kill(p, SIGTERM);
  auto anyAlive = [&] {
    for (pid_t p : tree)
      if (processAlive(p))
        return true;
    return false;
  };
  double t0 = now();
  while ((!exited(&status) || anyAlive()) && now() - t0 < grace)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (pid_t p : descendants(id))
    tree.push_back(p);
  if (!exited(&status))
    ::kill(id, SIGKILL);
  for (pid_t p : tree)
    if (processAlive(p))
      ::kill(p, SIGKILL);
  while (!exited(&status))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // SIGKILL is not instant: the next job starts only once this one's
  // processes are gone (bounded: one that will not go is left to init).
  for (int i = 0; i < 200 && anyAlive(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

} // namespace frenzy::elastic
