//===- SideTaskHost.cpp - run side tasks only inside their slots ----------===//
//
// The order of checks in a slot is what bounds the main stream's delay:
// before each task step the host asks whether the main stream can go on
// (then it leaves at once, costing nothing) and whether the step, at its
// running-mean length, would end past the slot's limit (then it does not
// start it). Only a step already running when the main stream's input
// arrives delays it, by at most that step's length.
//
//===----------------------------------------------------------------------===//
#include "SideTaskHost.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <sched.h>

namespace frenzy::rt {

SideReport &SideReport::operator+=(const SideReport &o) {
  slots += o.slots;
  steps += o.steps;
  harvested += o.harvested;
  delay += o.delay;
  overrun += o.overrun;
  overruns += o.overruns;
  failures += o.failures;
  return *this;
}

double SideTaskHost::now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

SideTaskHost::SideTaskHost(std::vector<SideTaskState> tasks,
                           std::function<void(const std::string &)> rep)
    : all(std::move(tasks)), report(std::move(rep)) {
  if (!report)
    report = [](const std::string &line) {
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
    };
}

SideTaskHost::~SideTaskHost() { finishAll(); }

void SideTaskHost::fail(SideTaskState &t, const std::string &why) {
  if (!t.failure.empty())
    return;
  t.failure = why.empty() ? "failed" : why;
  ++step.failures;
  report("side task '" + t.task->name() + "' failed after " +
         std::to_string(t.steps) + " steps: " + t.failure +
         "; the main job goes on without it");
  try {
    t.task->pause();
  } catch (...) {
  }
}

void SideTaskHost::init() {
  for (SideTaskState &t : all) {
    try {
      t.task->init(t.budget);
      t.ready = true;
    } catch (const std::exception &e) {
      fail(t, std::string("cannot start: ") + e.what());
    } catch (...) {
      fail(t, "cannot start: an exception that is not a std::exception");
    }
  }
}

bool SideTaskHost::active() const {
  for (const SideTaskState &t : all)
    if (t.ready && !t.done && t.failure.empty())
      return true;
  return false;
}

bool SideTaskHost::usable(size_t i) const {
  return all[i].ready && !all[i].done && all[i].failure.empty();
}

int SideTaskHost::pick(const SideSlot &s, double now, double deadline,
                       bool late, bool blocked) {
  // A step fits when its running-mean length ends before the limit, or,
  // where the slot ends only when the main stream can go on (`blocked`:
  // a readiness test and a grace), when it is short enough to be a
  // bounded delay. A task that does not fit has its
  // estimate shrunk a little, so one slow step (a first one paying its
  // page faults) does not keep it out for good.
  auto fits = [&](size_t i) {
    SideTaskState &t = all[i];
    if (t.task->preemptible())
      return !late || blocked;
    bool ok = now + t.stepEstimate <= deadline ||
              (blocked && t.stepEstimate <= grace);
    if (!ok)
      t.stepEstimate *= 0.9;
    return ok;
  };
  if (s.task >= 0)
    return size_t(s.task) < all.size() && usable(size_t(s.task)) &&
                   fits(size_t(s.task))
               ? s.task
               : -1;
  // Highest priority first; among equals, the one after the last run.
  int best = -1;
  for (size_t k = 0; k < all.size(); ++k) {
    size_t i = (rr + k) % all.size();
    if (usable(i) &&
        (best < 0 || all[i].priority > all[size_t(best)].priority) && fits(i))
      best = int(i);
  }
  if (best >= 0)
    rr = size_t(best) + 1;
  return best;
}

void SideTaskHost::runSlot(const SideSlot &s,
                           const std::function<bool()> &ready, double limit) {
  if (!active() || limit <= 0 || (ready && ready()))
    return;
  double start = now(), deadline = start + limit;
  bool entered = false;
  int64_t n = 0;
  while (s.steps <= 0 || n < s.steps) {
    double at = now();
    bool late = at >= deadline, blocked = ready && grace > 0;
    if (late && !blocked)
      break;
    int i = pick(s, at, deadline, late, blocked);
    if (i < 0)
      break;
    if (!entered) {
      entered = true;
      ++step.slots;
    }
    SideTaskState &t = all[size_t(i)];
    try {
      t.task->resume();
    } catch (const std::exception &e) {
      fail(t, std::string("resume: ") + e.what());
      continue;
    }
    bool mainReady = t.task->preemptible()
                         ? runProcess(t, ready, late ? 1e300 : deadline)
                         : runStep(t, s, ready, deadline, late);
    ++n;
    if (t.failure.empty()) {
      try {
        t.task->pause();
      } catch (const std::exception &e) {
        fail(t, std::string("pause: ") + e.what());
      }
    }
    if (mainReady)
      break;
  }
}

bool SideTaskHost::runStep(SideTaskState &t, const SideSlot &s,
                           const std::function<bool()> &ready, double deadline,
                           bool late) {
  int64_t budget = s.memoryBytes > 0 ? s.memoryBytes : t.budget;
  double start = now();
  bool more = true;
  try {
    more = t.task->step();
  } catch (const std::exception &e) {
    fail(t, std::string("threw: ") + e.what());
  } catch (...) {
    fail(t, "threw an exception that is not a std::exception");
  }
  double end = now(), len = end - start;
  t.seconds += len;
  step.harvested += len;
  // Ranks may share cores (CPU ranks; under SCHED_FIFO a running rank
  // keeps its core until it blocks): a rank whose message has arrived must
  // get a core before this rank's next side-task step.
  sched_yield();
  if (!t.failure.empty())
    return false;
  ++t.steps;
  ++step.steps;
  // A running mean that follows a task whose steps change length.
  t.stepEstimate = t.steps == 1 ? len : 0.8 * t.stepEstimate + 0.2 * len;
  int64_t bytes = t.task->bytesInUse();
  if (budget > 0 && bytes > budget)
    fail(t, "holds " + std::to_string(bytes) + " bytes, over its budget of " +
                std::to_string(budget));
  else if (!more)
    t.done = true;
  bool mainReady = ready && ready();
  // Past the limit with the main stream still blocked and a grace allowed:
  // no harm done, the slot goes on (as it would for a step started late).
  bool blocked = ready && !mainReady && grace > 0;
  if (!late && end > deadline && !blocked) {
    // Started to fit the slot and did not: paused (the slot ends here).
    step.overrun += end - deadline;
    ++step.overruns;
    // Without a readiness test the main stream is taken to wait for the
    // whole overrun; with one, only when it could have gone on.
    if (!ready || mainReady)
      step.delay += std::min(len, end - deadline);
    return true;
  }
  if (mainReady)
    step.delay += len; // the main stream's input arrived while this ran
  return mainReady;
}

bool SideTaskHost::runProcess(SideTaskState &t,
                              const std::function<bool()> &ready,
                              double deadline) {
  double start = now(), last = start;
  bool mainReady = false;
  timespec nap{0, 100 * 1000}; // 0.1 ms: the delay bound of a process slot
  for (;;) {
    std::string why = t.task->poll();
    if (!why.empty()) {
      t.seconds += now() - start;
      step.harvested += now() - start;
      fail(t, why);
      return false;
    }
    if (t.task->finished()) {
      t.done = true;
      break;
    }
    double at = now();
    if (ready && ready()) {
      step.delay += at - last;
      mainReady = true;
      break;
    }
    if (at >= deadline) {
      if (!ready) {
        step.delay += at - deadline;
        step.overrun += at - deadline;
      }
      mainReady = true; // the slot is over
      break;
    }
    last = at;
    nanosleep(&nap, nullptr);
  }
  double len = now() - start;
  t.seconds += len;
  step.harvested += len;
  ++t.steps;
  ++step.steps;
  return mainReady;
}

SideReport SideTaskHost::takeStep() {
  SideReport r = step;
  sum += step;
  step = SideReport();
  return r;
}

void SideTaskHost::finishAll() {
  if (finishedAll)
    return;
  finishedAll = true;
  for (SideTaskState &t : all) {
    try {
      t.task->finish();
    } catch (const std::exception &e) {
      if (t.failure.empty())
        fail(t, std::string("finish: ") + e.what());
    } catch (...) {
    }
  }
}

} // namespace frenzy::rt
