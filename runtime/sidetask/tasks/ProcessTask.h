//===- ProcessTask.h - a preemptible process as a side task -----*- C++ -*-===//
//
// A side task of kind `process`: a shell command started once (posix_spawn,
// not fork: the parent is an MPI process) and stopped at once; the host
// continues it (SIGCONT) for a slot and stops it (SIGSTOP) at the slot's
// end. Its death is seen by waitpid without waiting: killed by a signal or
// a non-zero exit is a failure, reported with the signal or status; exit 0
// is the task finishing. finish() kills what is left (SIGKILL) and reaps it.
// Its memory is its resident set (/proc/PID/statm).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_TASKS_PROCESSTASK_H
#define FRENZY_RUNTIME_SIDETASK_TASKS_PROCESSTASK_H

#include "SideTask.h"

#include <sys/types.h>

namespace frenzy::rt {

class ProcessTask : public SideTask {
public:
  explicit ProcessTask(std::string command) : cmd(std::move(command)) {}
  ~ProcessTask() override;
  std::string name() const override { return "process"; }
  void init(int64_t memoryBudget) override;
  bool step() override { return false; }
  void pause() override;
  void resume() override;
  void finish() override;
  int64_t bytesInUse() const override;
  std::string progress() const override;
  bool preemptible() const override { return true; }
  std::string poll() override;
  bool finished() const override { return exitedCleanly; }

private:
  std::string cmd;
  pid_t pid = -1;
  bool exitedCleanly = false;
  std::string death;
};

} // namespace frenzy::rt

#endif
