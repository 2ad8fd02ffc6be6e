//===- BoundedChild.cpp - a child process with a deadline -----------------===//
//
// The child leads a process group of its own (set on both sides of the
// fork, so the group exists whichever runs first), so the kill at the
// deadline reaches what it started too (frenzy-opt under the plan step).
// Output is read while waiting: a child that fills a pipe would otherwise
// block and look hung.
//
//===----------------------------------------------------------------------===//
#include "BoundedChild.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace frenzy::sched;

int frenzy::sched::execArgv(const std::vector<std::string> &argv) {
  std::vector<char *> a;
  for (const std::string &s : argv)
    a.push_back(const_cast<char *>(s.c_str()));
  a.push_back(nullptr);
  ::execvp(a[0], a.data());
  std::fprintf(stderr, "cannot run %s: %s\n", a[0], std::strerror(errno));
  return 127;
}

static int statusOf(int ws) {
  return WIFEXITED(ws) ? WEXITSTATUS(ws)
         : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws)
                           : 126;
}

ChildResult frenzy::sched::runChild(const std::function<int()> &body,
                                    double timeoutS) {
  ChildResult r;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    return r.err = std::strerror(errno), r;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return r.err = std::strerror(errno), r;
  }
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close_range(3, ~0U, 0);
    ::signal(SIGPIPE, SIG_DFL);
    int rc = body();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    ::close(out[0]);
    ::close(err[0]);
    return r.err = std::string("fork: ") + std::strerror(errno), r;
  }
  ::setpgid(pid, pid);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutS);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string *into[2] = {&r.out, &r.err};
  bool exited = false;
  int ws = 0;
  while (true) {
    if (!exited) {
      pid_t w = ::waitpid(pid, &ws, WNOHANG);
      exited = w == pid || (w < 0 && errno != EINTR);
    }
    bool open = fds[0].fd >= 0 || fds[1].fd >= 0;
    // Done once it exited and said everything (or left descriptors with
    // a grandchild that keeps them: drained without waiting then).
    auto left = deadline - std::chrono::steady_clock::now();
    if (!exited && left <= std::chrono::steady_clock::duration::zero()) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &ws, 0);
      r.timedOut = true;
      break;
    }
    if (!open) {
      if (exited)
        break;
      // Output closed early (the child redirected it): wait in steps.
      ::usleep(10000);
      continue;
    }
    int ms = exited ? 0
                    : int(std::min<long long>(
                          50, std::chrono::duration_cast<
                                  std::chrono::milliseconds>(left)
                                      .count() +
                                  1));
    int n = ::poll(fds, 2, ms);
    if (n < 0 && errno != EINTR)
      break;
    if (n == 0 && exited)
      break;
    for (int i = 0; i < 2; ++i)
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[4096];
        ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
        if (got > 0) {
          into[i]->append(buf, size_t(got));
        } else if (got == 0 || errno != EINTR) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
        }
      }
  }
  for (pollfd &f : fds)
    if (f.fd >= 0)
      ::close(f.fd);
  if (!r.timedOut)
    r.status = statusOf(ws);
  return r;
}
