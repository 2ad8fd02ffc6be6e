//===- ProcessTask.cpp - a preemptible process as a side task -------------===//
#include "ProcessTask.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace frenzy::rt {

ProcessTask::~ProcessTask() { finish(); }

void ProcessTask::init(int64_t) {
  if (cmd.empty())
    throw std::invalid_argument("process: no command given");
  // The shell stops itself before the command: nothing of it runs before
  // the first slot (a SIGSTOP sent from here could come too late).
  std::string sh = "/bin/sh", flag = "-c", script = "kill -STOP $$; " + cmd;
  char *argv[] = {sh.data(), flag.data(), script.data(), nullptr};
  // A process group of its own: SIGSTOP and SIGCONT reach every process the
  // command starts, not only the shell.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  int err = posix_spawn(&pid, "/bin/sh", nullptr, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    pid = -1;
    throw std::runtime_error("process: cannot start '" + cmd +
                             "': " + std::strerror(err));
  }
  int status = 0;
  if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
    pid = -1;
    throw std::runtime_error("process: '" + cmd + "' ended before it ran");
  }
}

void ProcessTask::pause() {
  if (pid > 0)
    ::kill(-pid, SIGSTOP);
}

void ProcessTask::resume() {
  if (pid > 0)
    ::kill(-pid, SIGCONT);
}

std::string ProcessTask::poll() {
  if (pid <= 0)
    return death;
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG | WUNTRACED | WCONTINUED);
  if (r != pid || WIFSTOPPED(status) || WIFCONTINUED(status))
    return "";
  pid = -1;
  if (WIFSIGNALED(status))
    death = "its process was killed by signal " +
            std::to_string(WTERMSIG(status)) + " (" +
            strsignal(WTERMSIG(status)) + ")";
  else if (WEXITSTATUS(status) != 0)
    death = "its process exited with status " +
            std::to_string(WEXITSTATUS(status));
  else
    exitedCleanly = true;
  return death;
}

void ProcessTask::finish() {
  if (pid <= 0)
    return;
  ::kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  pid = -1;
}

int64_t ProcessTask::bytesInUse() const {
  if (pid <= 0)
    return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  int64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * int64_t(sysconf(_SC_PAGESIZE));
}

std::string ProcessTask::progress() const {
  if (exitedCleanly)
    return "exited cleanly";
  if (pid > 0)
    return "running (pid " + std::to_string(pid) + ")";
  return death.empty() ? "stopped at the end of the run" : death;
}

} // namespace frenzy::rt
