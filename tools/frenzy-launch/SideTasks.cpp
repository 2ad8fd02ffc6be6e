//===- SideTasks.cpp - frenzy-launch's side tasks and speed emulation -----===//
//
// Each rank runs its own instances of the --side-task tasks (a rank stands
// for one GPU: its bubbles are its own). The per-rank record travels to
// rank 0 as a JSON fragment through the trace gather.
//
//===----------------------------------------------------------------------===//
#include "SideTasks.h"

#include "SideTaskSpec.h"
#include "SpeedEmulation.h"
#include "TraceGather.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace frenzy::rt {

/// The explicit factors, or all 1 (plan emulation: known after step 2).
static std::vector<double> factorsOf(const Options &o, const plan::Plan &p) {
  PlanEmulation e = o.emulateSpeed.empty() ? PlanEmulation()
                                           : planEmulation(o.emulateSpeed);
  if (o.emulateSpeed.empty() || e.base > 0 || e.scale > 0)
    return std::vector<double>(size_t(p.ranks_size()), 1.0);
  return parseSpeedFactors(o.emulateSpeed, p.ranks_size());
}

/// The plan's side task named `name`, or -1.
static int planTask(const plan::Plan &p, const std::string &name) {
  for (int t = 0; t < p.side_tasks_size(); ++t)
    if (p.side_tasks(t).name() == name)
      return t;
  return -1;
}

void SideRun::check(const Options &o, const plan::Plan &p) {
  factorsOf(o, p);
  for (const std::string &arg : o.sideTasks) {
    SideTaskBinding b = parseSideTaskArg(arg);
    try {
      makeSideTask(b.spec);
    } catch (const std::invalid_argument &e) {
      throw RuntimeError(e.what());
    }
    // A plan with slots runs its own tasks: a binding must name one.
    if (p.side_tasks_size() > 0 && planTask(p, b.name) < 0) {
      std::string names;
      for (const plan::SideTask &t : p.side_tasks())
        names += (names.empty() ? "" : ", ") + t.name();
      throw RuntimeError("--side-task=" + arg + ": the plan's side-task "
                         "slots are for " + names + ", not '" + b.name +
                         "'; write --side-task=NAME=KIND:... with one of "
                         "those names");
    }
  }
}

SideRun::SideRun(const Options &opts, const plan::Plan &plan,
                 RankRunner &r, int rk)
    : o(opts), p(plan), runner(r), rank(rk) {
  factors = factorsOf(o, p);
  factor = factors[size_t(rank)];
  if (!o.emulateSpeed.empty())
    emu = planEmulation(o.emulateSpeed);
  enabled = !o.sideTasks.empty() || !o.emulateSpeed.empty() ||
            !o.sideReport.empty();
  if (!enabled)
    return;
  runner.setMeasureTimes(true);
  runner.setSpeedFactor(factor);
  if (o.sideTasks.empty())
    return;
  std::vector<SideTaskState> tasks;
  std::vector<int> ofPlanTask(size_t(p.side_tasks_size()), -1);
  for (const std::string &arg : o.sideTasks) {
    SideTaskBinding b = parseSideTaskArg(arg);
    int t = planTask(p, b.name);
    if (t >= 0) { // the plan's task: its slots and priority
      ofPlanTask[size_t(t)] = int(tasks.size());
      tasks.push_back(makeSideTask(b.spec));
      tasks.back().priority = p.side_tasks(t).priority();
    } else {
      tasks.push_back(makeSideTask(b.spec));
    }
  }
  if (rank == 0)
    for (int t = 0; t < p.side_tasks_size(); ++t)
      if (ofPlanTask[size_t(t)] < 0)
        std::fprintf(stderr,
                     "frenzy-launch: warning: the plan's side task '%s' has "
                     "no --side-task=%s=KIND:...; its slots stay idle\n",
                     p.side_tasks(t).name().c_str(),
                     p.side_tasks(t).name().c_str());
  planTasks = std::move(ofPlanTask);
  int me = rank;
  host = std::make_unique<SideTaskHost>(
      std::move(tasks), [me](const std::string &line) {
        std::fflush(stdout);
        std::fprintf(stderr, "frenzy-launch: rank %d: %s\n", me, line.c_str());
        std::fflush(stderr);
      });
  host->init();
  // In front of a receive the limit is the previous step's wait there; a
  // message later than that still blocks the rank, and steps of at most
  // half a millisecond go on until it arrives.
  host->setGrace(5e-4);
  // Under plan emulation side tasks start once its scale is measured.
  if (emu.base == 0 && emu.scale == 0)
    runner.setSideTasks(host.get(), planTasks);
}

SideRun::~SideRun() {
  runner.setSideTasks(nullptr);
}

void SideRun::afterStep(int64_t step, Comm &comm) {
  if (!enabled)
    return;
  steps.push_back({step, runner.stepTimes(),
                   host ? host->takeStep() : SideReport()});
  if ((emu.base > 0 || emu.scale > 0) && steps.size() == 2) {
    // The second step (the first pays its page faults): every rank's CPU
    // per micro-batch, the same scale computed on every rank.
    std::vector<double> cpu(size_t(p.ranks_size()), 0.0);
    int64_t mbs = 0;
    for (const plan::StageProgram &sp : p.stages())
      for (int32_t id : sp.ranks())
        if (id == rank)
          mbs = sp.micro_batches();
    const StepTimes &t = runner.stepTimes();
    double perMb = t.computeCpu / double(std::max<int64_t>(mbs, 1));
    cpu[size_t(rank)] = perMb;
    comm.allReduceSum(cpu.data(), int64_t(cpu.size()));
    std::vector<double> pred = predictedPerMicroBatch(p);
    scale = emu.scale > 0 ? emu.scale : timelineScale(pred, cpu, emu.base);
    for (size_t r = 0; r < factors.size(); ++r)
      factors[r] = cpu[r] > 0 ? scale * pred[r] / cpu[r] : 1.0;
    factor = factors[size_t(rank)];
    if (predictsActions(p)) {
      // Every action takes its predicted time x the scale.
      runner.setTimelineScale(scale);
    } else {
      // The rank's emulated micro-batch, split as its CPU time splits.
      double share = t.computeCpu > 0 ? t.forwardCpu / t.computeCpu : 0.5;
      runner.setComputeDurations(scale * pred[size_t(rank)] * share,
                                 scale * pred[size_t(rank)] * (1 - share));
    }
    // Side tasks start now: the scale is measured without them.
    if (host)
      runner.setSideTasks(host.get(), planTasks);
    runner.setSlotScale(scale);
    if (rank == 0) {
      std::printf("emulate-speed: from step %" PRId64 " %s take the plan's "
                  "predicted time x %.6g (--emulate-speed=scale:%.6g; "
                  "factors over CPU time",
                  step + 1,
                  predictsActions(p) ? "all actions (compute, transfers, "
                                       "reductions, optimizer)"
                                     : "forward and backward",
                  scale, scale);
      for (size_t k = 0; k < factors.size(); ++k)
        std::printf(" %zu:%.2f", k, factors[k]);
      std::printf(")\n");
      std::fflush(stdout);
    }
  }
}

static std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

std::string SideRun::serialize() const {
  std::ostringstream js;
  js.precision(9);
  js << "{\"rank\": " << rank << ", \"gpu_type\": "
     << jsonString(p.ranks(rank).gpu_type()) << ", \"factor\": " << factor
     << ", \"steps\": [";
  for (size_t k = 0; k < steps.size(); ++k) {
    const Step &s = steps[k];
    js << (k ? ", " : "") << "{\"step\": " << s.step
       << ", \"step_s\": " << s.t.step << ", \"compute_s\": " << s.t.compute
       << ", \"compute_cpu_s\": " << s.t.computeCpu
       << ", \"emulated_s\": " << s.t.emulated
       << ", \"recv_wait_s\": " << s.t.recvWait
       << ", \"collective_s\": " << s.t.collective
       << ", \"side_slots\": " << s.r.slots
       << ", \"side_steps\": " << s.r.steps
       << ", \"harvested_s\": " << s.r.harvested
       << ", \"delay_s\": " << s.r.delay << ", \"overrun_s\": " << s.r.overrun
       << ", \"overruns\": " << s.r.overruns
       << ", \"failures\": " << s.r.failures << "}";
  }
  js << "], \"tasks\": [";
  if (host)
    for (size_t k = 0; k < host->tasks().size(); ++k) {
      const SideTaskState &t = host->tasks()[k];
      js << (k ? ", " : "") << "{\"name\": " << jsonString(t.task->name())
         << ", \"steps\": " << t.steps << ", \"seconds\": " << t.seconds
         << ", \"done\": " << (t.done ? "true" : "false")
         << ", \"failure\": " << jsonString(t.failure)
         << ", \"progress\": " << jsonString(t.task->progress()) << "}";
    }
  js << "]}";
  return js.str();
}

void SideRun::finish(Comm &comm) {
  if (!enabled)
    return;
  if (host)
    host->finishAll();
  std::vector<std::string> all = gatherTrace(comm, serialize());
  // The summary lines come from each rank's own record (rank 0 prints them
  // in rank order): sums over the steps after the first, which runs no
  // side task (the gaps' limits are measured in it), or after the second
  // under plan emulation (its factors are measured in it).
  std::vector<std::string> lines;
  auto line = [&](const char *fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof(buf), fmt, args...);
    return std::string(buf);
  };
  SideReport sum;
  double wait = 0, stepTime = 0, compute = 0, cpu = 0;
  // Plan emulation starts after step 2: its summary starts there too.
  int first = emu.base > 0 || emu.scale > 0 ? 2 : 1;
  for (size_t k = size_t(first); k < steps.size(); ++k) {
    sum += steps[k].r;
    wait += steps[k].t.recvWait;
    stepTime += steps[k].t.step;
    compute += steps[k].t.compute;
    cpu += steps[k].t.computeCpu;
  }
  std::string mine;
  if (!o.emulateSpeed.empty())
    mine += line("emulate-speed: rank %d (%s) x%.2f: compute %.4f s for "
                 "%.4f s of CPU (x%.2f), steps %d-%zu\n",
                 rank, p.ranks(rank).gpu_type().c_str(), factor, compute, cpu,
                 cpu > 0 ? compute / cpu : 0.0, first + 1, steps.size());
  if (host) {
    // In front of receives the harvest is part of the wait; plan slots
    // come before the receive, whose remaining wait is what was left.
    bool slots = p.side_tasks_size() > 0;
    double idle = slots ? wait + sum.harvested : wait;
    mine += line("side tasks: rank %d: %" PRId64 " steps in %" PRId64
                 " %s, harvested %.4f s of %.4f s idle "
                 "(%.0f%%), main-stream delay <= %.4f s (%.2f%% of %.4f s), "
                 "%" PRId64 " overruns (%.4f s), %" PRId64 " failures\n",
                 rank, sum.steps, sum.slots,
                 slots ? "plan slots" : "gaps before receives", sum.harvested,
                 idle, idle > 0 ? 100 * sum.harvested / idle : 0.0, sum.delay,
                 stepTime > 0 ? 100 * sum.delay / stepTime : 0.0, stepTime,
                 sum.overruns, sum.overrun, sum.failures);
    for (const SideTaskState &t : host->tasks())
      mine += line("side tasks: rank %d: %s: %" PRId64 " steps, %.4f s, %s%s\n",
                   rank, t.task->name().c_str(), t.steps, t.seconds,
                   t.failure.empty() ? t.task->progress().c_str() : "failed: ",
                   t.failure.c_str());
  }
  std::vector<std::string> text = gatherTrace(comm, mine);
  if (comm.rank() != 0)
    return;
  for (const std::string &s : text)
    std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
  if (o.sideReport.empty())
    return;
  std::ofstream out(o.sideReport);
  out << "{\"plan\": " << jsonString(o.plan) << ", \"ranks\": [\n";
  for (size_t k = 0; k < all.size(); ++k)
    out << (k ? ",\n" : "") << all[k];
  out << "\n]}\n";
  if (!out)
    std::fprintf(stderr, "frenzy-launch: warning: --side-report=%s: cannot "
                         "write the file\n", o.sideReport.c_str());
  else
    std::printf("wrote the side-task report of %zu ranks to %s\n", all.size(),
                o.sideReport.c_str());
}

} // namespace frenzy::rt
