//===- Processes.h - children with timeouts, process trees ------*- C++ -*-===//
//
// frenzy-elastic starts two kinds of children: frenzy-opt (run to the end,
// within a time limit) and frenzy-launch (which becomes mpirun and its
// ranks; read line by line while it runs). mpirun's ranks may sit in
// process groups of their own, so a job is ended by walking /proc for the
// processes below it, not by killing a group.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_ELASTIC_PROCESSES_H
#define FRENZY_TOOLS_ELASTIC_PROCESSES_H

#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace frenzy::elastic {

struct RunResult {
  int status = -1; // exit status; -1: did not exit by itself
  bool timedOut = false;
  std::string out, err;
  double seconds = 0;
};

/// Runs argv to its end or `timeout` seconds (then kills it and every
/// process below it).
RunResult runWithTimeout(const std::vector<std::string> &argv, double timeout);

/// A running child whose stdout and stderr are read as lines.
class Child {
public:
  /// Throws ElasticError when it cannot be started.
  explicit Child(const std::vector<std::string> &argv);
  ~Child();
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;

  pid_t pid() const { return id; }
  /// Complete lines that arrived within `ms` milliseconds (first: whether
  /// the line came from stderr).
  std::vector<std::pair<bool, std::string>> readLines(int ms);
  /// Whether the child has exited; its wait status in `status`.
  bool exited(int *status);
  /// Ends the child and every process below it: SIGTERM to the child,
  /// SIGKILL to all that remain after `grace` seconds; waits for it.
  void stop(double grace);

private:
  pid_t id = -1;
  int fds[2] = {-1, -1};
  std::string partial[2];
  bool reaped = false;
  int waitStatus = 0;
};

/// Every process below `pid` now (children, their children, ...).
std::vector<pid_t> descendants(pid_t pid);
/// Whether a process with this id exists on this machine (a zombie counts
/// as gone).
bool processAlive(pid_t pid);
/// The program beside this one named `name`, else `name` (found on PATH).
std::string besideSelf(const std::string &name);
/// Whether `program` can be run: an executable file when it names a path,
/// else one on PATH (as execvp looks for it).
bool findProgram(const std::string &program);

} // namespace frenzy::elastic

#endif
