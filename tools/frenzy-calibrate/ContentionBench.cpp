//===- ContentionBench.cpp - kernels slowed by the other ranks ------------===//
//
// Each child pins itself to core i mod cores, waits for the others on a
// pipe, then runs the reference step `steps` times, taking the CPU time of
// its own thread per step (time off the core does not count: only the
// slowdown of the work itself) and yielding its core after each step. It
// writes its median to a pipe. The parent takes the mean over children.
// For cold turns one child writes a buffer of other data before each step.
//
//===----------------------------------------------------------------------===//
#include "ContentionBench.h"

#include "Executor.h"
#include "PlanLoader.h"
#include "plan/KernelCost.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <atomic>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace frenzy::calibrate {

static double threadCpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// The child's work: the median CPU seconds of one step.
static double childSteps(const plan::Plan &pl, int steps, int startFd,
                         size_t evict) {
  std::vector<char> other(evict); // what the other ranks' turns would touch
  rt::Executor ex(pl);
  ex.loadWeights(1234);
  std::vector<int32_t> all(size_t(ex.program().instrs_size()));
  std::iota(all.begin(), all.end(), 0);
  ex.beginStep(1, 1); // warm: allocations and page faults
  ex.run(all);
  char go;
  if (read(startFd, &go, 1) != 1) // every child is ready
    return -1;
  std::vector<double> t;
  for (int s = 0; s < steps; ++s) {
    ex.beginStep(s + 2, 1);
    for (size_t i = 0; i < other.size(); i += 64)
      other[i] = char(other[i] + 1);
    double c0 = threadCpu();
    ex.run(all);
    t.push_back(threadCpu() - c0);
    sched_yield(); // the next rank of this core runs, as after a rank's wait
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Mean over `n` children of their median step CPU time; < 0 on failure.
static double runChildren(const plan::Plan &pl, int n, int cores, int steps,
                          size_t evict = 0) {
  int start[2], results[2];
  if (pipe(start) != 0 || pipe(results) != 0)
    return -1;
  std::vector<pid_t> kids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(i % cores, &set);
      sched_setaffinity(0, sizeof(set), &set);
      close(start[1]);
      double med = -1;
      try {
        med = childSteps(pl, steps, start[0], evict);
      } catch (...) {
      }
      ssize_t w = write(results[1], &med, sizeof(med));
      _exit(w == sizeof(med) && med > 0 ? 0 : 1);
    }
    kids.push_back(pid);
  }
  close(start[0]);
  close(results[1]);
  std::vector<char> go(size_t(n), 'g');
  bool ok = write(start[1], go.data(), go.size()) == ssize_t(go.size());
  close(start[1]);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    double med = 0;
    ok = ok && read(results[0], &med, sizeof(med)) == sizeof(med) && med > 0;
    sum += med;
  }
  close(results[0]);
  for (pid_t k : kids) {
    int status = 0;
    waitpid(k, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok ? sum / n : -1;
}

Contention measureContention(const std::string &planPath, int cores,
                             bool quick) {
  Contention c;
  if (cores < 2)
    return c;
  plan::Plan pl = rt::loadPlanFile(planPath);
  int steps = quick ? 5 : 30;
  double alone = runChildren(pl, 1, cores, steps);
  if (alone <= 0)
    return c;
  char buf[96];
  std::snprintf(buf, sizeof(buf), "step of %s: alone %.3f ms", planPath.c_str(),
                alone * 1e3);
  c.what = buf;
  for (int k = 1; k <= 3; ++k) {
    double t = runChildren(pl, k * cores, cores, steps);
    if (t <= 0)
      return Contention();
    c.slowdown.push_back({k, t / alone});
    std::snprintf(buf, sizeof(buf), ", %d per core %.3f ms", k, t * 1e3);
    c.what += buf;
  }
  return c;
}

ColdTurn measureColdTurn(const std::string &planPath, int cores, bool quick) {
  ColdTurn c;
  plan::Plan pl = rt::loadPlanFile(planPath);
  std::vector<int32_t> all(size_t(pl.program().instrs_size()));
  std::iota(all.begin(), all.end(), 0);
  c.stateBytes = plan::updatedParameterBytes(pl.program(), all);
  if (c.stateBytes <= 0)
    return ColdTurn();
  int steps = quick ? 5 : 30;
  double alone = runChildren(pl, 1, std::max(cores, 1), steps);
  if (alone <= 0)
    return c;
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                "step of %s (parameters %.2f MiB): alone %.3f ms",
                planPath.c_str(), c.stateBytes / (1 << 20), alone * 1e3);
  c.what = buf;
  for (int mib : {4, 8, 16, 32, 64}) {
    double t = runChildren(pl, 1, std::max(cores, 1), steps, size_t(mib) << 20);
    if (t <= 0)
      return ColdTurn();
    c.extra.push_back({double(size_t(mib) << 20), std::max(0.0, t - alone)});
    std::snprintf(buf, sizeof(buf), ", %d MiB evicted %.3f ms", mib, t * 1e3);
    c.what += buf;
  }
  return c;
}

double measureIdleWake(int cores, bool quick) {
  if (cores < 2)
    return 0;
  // One shared page: the futex word, the waker's time stamp, the result.
  void *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    return 0;
  auto *word = static_cast<std::atomic<int32_t> *>(page);
  auto *stamp = reinterpret_cast<double *>(static_cast<char *>(page) + 64);
  auto *result = stamp + 1;
  new (word) std::atomic<int32_t>(0);
  const int n = quick ? 40 : 200;
  auto pin = [](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
  };
  auto monotonic = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  };
  pid_t pid = fork();
  if (pid == 0) { // the sleeper, alone on core 0
    pin(0);
    std::vector<double> lat;
    for (int i = 0; i < n; ++i) {
      int32_t v;
      while ((v = word->load()) % 2 == 0)
        syscall(SYS_futex, reinterpret_cast<int32_t *>(word), FUTEX_WAIT, v,
                nullptr, nullptr, 0);
      lat.push_back(monotonic() - *stamp);
      word->fetch_add(1);
    }
    std::sort(lat.begin(), lat.end());
    *result = lat[lat.size() / 2];
    _exit(0);
  }
  pin(1);
  for (int i = 0; i < n; ++i) {
    timespec idle{0, 2'000'000}; // long enough for core 0 to go idle
    nanosleep(&idle, nullptr);
    *stamp = monotonic();
    word->fetch_add(1);
    syscall(SYS_futex, reinterpret_cast<int32_t *>(word), FUTEX_WAKE, 1,
            nullptr, nullptr, 0);
    while (word->load() % 2 == 1)
      sched_yield();
  }
  int status = 0;
  waitpid(pid, &status, 0);
  double wake = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? *result : 0;
  munmap(page, 4096);
  return std::max(0.0, wake);
}

} // namespace frenzy::calibrate
