//===- Placement.cpp - side-task steps into pipeline bubbles --------------===//
//
// The greedy solver and the checks of the placement problem. Bubbles recur
// every training step, so a placement is per training step: a task bounded
// to N steps runs at most N steps in each step's bubbles. A slot keeps the
// time margin free at its bubble's end (the main stream's next phase must
// not wait for a side task that runs a little long) and the memory margin
// free beside the task's working set (the memory analysis is a prediction).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/SideTasks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

using namespace frenzy::sidetasks;
using frenzy::bubbles::Bubble;
using llvm::formatv;

namespace {
constexpr double kEps = 1e-9;

llvm::Error fail(const llvm::Twine &what) {
  return llvm::createStringError(what);
}

std::string ms(double s) { return formatv("{0:f3} ms", s * 1e3).str(); }
std::string mib(double b) {
  return formatv("{0:f1} MiB", b / double(1 << 20)).str();
}
} // namespace

llvm::Error PlacementProblem::check() const {
  if (!schedule || !analysis)
    return fail("the placement problem has no schedule or bubble analysis");
  if (tasks.empty())
    return fail("the placement problem has no side task");
  if (stepSeconds.size() != tasks.size())
    return fail("step times must be given for every task");
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (stepSeconds[t].size() != schedule->pipelines.size())
      return fail("task " + tasks[t].name + ": step times per pipeline");
    for (size_t p = 0; p < stepSeconds[t].size(); ++p) {
      if (stepSeconds[t][p].size() != schedule->pipelines[p].size())
        return fail("task " + tasks[t].name + ": step times per stage");
      for (const auto &s : stepSeconds[t][p])
        if (s && !(*s > 0 && std::isfinite(*s)))
          return fail("task " + tasks[t].name +
                      ": a step time is not "
                      "positive");
    }
  }
  for (const Bubble &b : analysis->bubbles)
    if (b.pipeline < 0 || size_t(b.pipeline) >= schedule->pipelines.size() ||
        b.stage < 0 ||
        size_t(b.stage) >= schedule->pipelines[b.pipeline].size())
      return fail("a bubble names a stage the schedule does not have");
  if (!(memoryMargin >= 0 && memoryMargin < 1 && timeMargin >= 0 &&
        timeMargin < 1))
    return fail("margins must be in [0, 1)");
  return llvm::Error::success();
}

Placement frenzy::sidetasks::placeGreedy(const PlacementProblem &pr) {
  const auto &bubbles = pr.analysis->bubbles;
  Placement out;
  size_t T = pr.tasks.size();
  out.taskGpuSeconds.assign(T, 0);
  out.taskSteps.assign(T, 0);
  out.why.assign(T, "");
  std::vector<double> cursor, end;
  for (const Bubble &b : bubbles) {
    cursor.push_back(b.start);
    end.push_back(b.start + b.seconds * (1 - pr.timeMargin));
  }
  std::vector<size_t> order(T);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pr.tasks[a].priority > pr.tasks[b].priority;
  });
  for (size_t t : order) {
    const SideTask &task = pr.tasks[t];
    double done = 0; // steps, fractional for a process
    // Why a bubble was passed over, for the report when nothing fits.
    std::vector<std::string> noTime;
    double mostFree = -1, longest = 0, longestStep = 0;
    std::string longestGpu;
    bool memoryFitSomewhere = false, anyTime = false;
    for (size_t i = 0; i < bubbles.size(); ++i) {
      if (task.steps >= 0 && done >= double(task.steps) - kEps)
        break;
      const Bubble &b = bubbles[i];
      const auto &stage = pr.schedule->pipelines[b.pipeline][b.stage];
      const std::optional<double> &sec = pr.stepSeconds[t][b.pipeline][b.stage];
      if (!sec) {
        if (std::find(noTime.begin(), noTime.end(), stage.gpu) == noTime.end())
          noTime.push_back(stage.gpu);
        continue;
      }
      anyTime = true;
      double memAvail =
          double(b.freeBytes) - pr.memoryMargin * double(stage.capacityBytes);
      mostFree = std::max(mostFree, memAvail);
      if (double(task.memoryBytes) > memAvail)
        continue;
      memoryFitSomewhere = true;
      double usable = b.seconds * (1 - pr.timeMargin);
      if (usable > longest) {
        longest = usable;
        longestStep = *sec;
        longestGpu = stage.gpu;
      }
      double avail = end[i] - cursor[i];
      double seconds = 0;
      int64_t steps = 0;
      if (task.kind == SideTask::Process) {
        double want =
            task.steps < 0 ? avail : (double(task.steps) - done) * *sec;
        seconds = std::min(avail, want);
        if (seconds <= kEps)
          continue;
        steps = int64_t(std::floor(seconds / *sec + kEps));
        done += seconds / *sec;
      } else {
        steps = int64_t(std::floor(avail / *sec + kEps));
        if (task.steps >= 0)
          steps = std::min<int64_t>(steps, task.steps - int64_t(done + kEps));
        if (steps <= 0)
          continue;
        seconds = double(steps) * *sec;
        done += double(steps);
      }
      Slot s;
      s.task = int(t);
      s.bubble = int(i);
      s.pipeline = b.pipeline;
      s.stage = b.stage;
      s.start = cursor[i];
      s.seconds = seconds;
      s.steps = steps;
      s.memoryBytes = task.memoryBytes;
      s.before = b.before;
      cursor[i] += seconds;
      out.slots.push_back(s);
      out.taskSteps[t] += steps;
      out.taskGpuSeconds[t] += seconds * double(stage.ranks);
    }
    // A process is preempted anywhere: its steps are the whole ones its
    // slots add up to.
    if (task.kind == SideTask::Process)
      out.taskSteps[t] = int64_t(std::floor(done + kEps));
    out.gpuSeconds += out.taskGpuSeconds[t];
    std::string &why = out.why[t];
    if (out.taskGpuSeconds[t] > 0) {
      if (task.steps >= 0 && done < double(task.steps) - kEps)
        why = formatv("placed {0} of {1} steps per training step: the "
                      "bubbles hold no more",
                      out.taskSteps[t], task.steps);
      continue;
    }
    if (bubbles.empty())
      why = "the schedule has no bubble";
    else if (!anyTime)
      why = "no step time for GPU type(s) " + llvm::join(noTime, ", ") +
            ": give 'seconds' for them, or flops/bytes";
    else if (!memoryFitSomewhere)
      why = formatv("needs {0} per GPU; the most free memory in any bubble, "
                    "less the {1}% margin, is {2}",
                    mib(double(task.memoryBytes)), pr.memoryMargin * 100,
                    mib(std::max(0.0, mostFree)))
                .str();
    else if (longestStep > longest)
      why =
          formatv("one step takes {0} on {1}; the largest bubble it fits "
                  "in memory is {2} (less the {3}% margin): larger than "
                  "any bubble, nothing placed",
                  ms(longestStep), longestGpu, ms(longest), pr.timeMargin * 100)
              .str();
    else
      why = "the bubbles it fits are taken by higher-priority tasks";
  }
  std::stable_sort(out.slots.begin(), out.slots.end(),
                   [](const Slot &a, const Slot &b) {
                     return std::tie(a.task, a.pipeline, a.stage, a.start) <
                            std::tie(b.task, b.pipeline, b.stage, b.start);
                   });
  return out;
}

llvm::Error frenzy::sidetasks::verify(const PlacementProblem &pr,
                                      const Placement &p) {
  const auto &bubbles = pr.analysis->bubbles;
  std::vector<std::vector<const Slot *>> inBubble(bubbles.size());
  std::vector<int64_t> steps(pr.tasks.size(), 0);
  for (const Slot &s : p.slots) {
    std::string at = formatv("slot of task {0} at {1}", s.task, ms(s.start));
    if (s.task < 0 || size_t(s.task) >= pr.tasks.size() || s.bubble < 0 ||
        size_t(s.bubble) >= bubbles.size())
      return fail(at + ": no such task or bubble");
    const Bubble &b = bubbles[size_t(s.bubble)];
    const SideTask &task = pr.tasks[size_t(s.task)];
    const auto &stage = pr.schedule->pipelines[b.pipeline][b.stage];
    if (b.pipeline != s.pipeline || b.stage != s.stage)
      return fail(at + ": not on its bubble's stage");
    if (s.start < b.start - kEps || s.seconds <= 0 ||
        s.start + s.seconds > b.start + b.seconds * (1 - pr.timeMargin) + kEps)
      return fail(at + ": outside its bubble less the time margin");
    if (double(task.memoryBytes) >
        double(b.freeBytes) - pr.memoryMargin * double(stage.capacityBytes))
      return fail(at + ": its memory does not fit the bubble's free memory");
    const auto &sec = pr.stepSeconds[size_t(s.task)][b.pipeline][b.stage];
    if (!sec)
      return fail(at + ": the task has no step time on " + stage.gpu);
    if (task.kind == SideTask::StepFunction &&
        (s.steps < 1 || double(s.steps) * *sec > s.seconds + kEps))
      return fail(at + ": its steps do not fit its time");
    steps[size_t(s.task)] += s.steps;
    inBubble[size_t(s.bubble)].push_back(&s);
  }
  for (auto &list : inBubble) {
    std::sort(list.begin(), list.end(),
              [](const Slot *a, const Slot *b) { return a->start < b->start; });
    for (size_t i = 1; i < list.size(); ++i)
      if (list[i]->start < list[i - 1]->start + list[i - 1]->seconds - kEps)
        return fail("two slots overlap in one bubble");
  }
  for (size_t t = 0; t < pr.tasks.size(); ++t)
    if (pr.tasks[t].steps >= 0 && steps[t] > pr.tasks[t].steps)
      return fail("task " + pr.tasks[t].name +
                  " runs more steps than it "
                  "asks for");
  return llvm::Error::success();
}

void frenzy::sidetasks::printPlacement(const PlacementProblem &pr,
                                       const Placement &p,
                                       llvm::raw_ostream &os) {
  const auto &a = *pr.analysis;
  os << formatv("side tasks: {0} task(s), {1} slot(s), harvested {2:f3} "
                "GPU-ms per training step of {3:f3} idle GPU-ms ({4:f1}%)\n",
                pr.tasks.size(), p.slots.size(), p.gpuSeconds * 1e3,
                a.idleGpuSeconds * 1e3,
                a.idleGpuSeconds > 0 ? 100 * p.gpuSeconds / a.idleGpuSeconds
                                     : 0);
  for (size_t t = 0; t < pr.tasks.size(); ++t) {
    const SideTask &task = pr.tasks[t];
    os << formatv("  {0} ({1}, priority {2}): ", task.name, kindName(task.kind),
                  task.priority);
    if (p.taskGpuSeconds[t] > 0) {
      size_t n = 0;
      for (const Slot &s : p.slots)
        n += s.task == int(t);
      os << formatv("{0} step(s) per training step in {1} slot(s), {2:f3} "
                    "GPU-ms",
                    p.taskSteps[t], n, p.taskGpuSeconds[t] * 1e3);
      if (!p.why[t].empty())
        os << "; " << p.why[t];
    } else {
      os << "not placed: " << p.why[t];
    }
    os << "\n";
  }
  for (const auto &tl : a.stages) {
    const auto &stage = pr.schedule->pipelines[tl.pipeline][tl.stage];
    double used = 0;
    for (const Slot &s : p.slots)
      if (s.pipeline == tl.pipeline && s.stage == tl.stage)
        used += s.seconds;
    os << formatv("  p{0} s{1} ({2} x{3}): harvested {4:f3} ms of {5:f3} ms "
                  "idle per GPU\n",
                  tl.pipeline, tl.stage, stage.gpu, stage.ranks, used * 1e3,
                  tl.idleSeconds * 1e3);
  }
}
