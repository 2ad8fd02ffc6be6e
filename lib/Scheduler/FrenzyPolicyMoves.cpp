//===- FrenzyPolicyMoves.cpp - the frenzy policy moving running jobs ------===//
//
// The adaptive and realloc parts of the frenzy policy (FrenzyPolicy.cpp
// has the whole design): grown jobs giving their extra GPUs back, a
// running job shrinking to make room or stopped for a much shorter one
// (preemptive shortest-first), fair-share shrinking and growth onto idle
// GPUs. Every move goes through SimContext::move/stop, so it pays the
// restart cost the simulator (or the service's resize) charges.
//
//===----------------------------------------------------------------------===//
#include "FrenzyPolicyImpl.h"

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::sched::frenzy_policy;

bool FrenzyPolicy::giveBack(SimContext &ctx) {
  auto &jobs = ctx.jobs();
  std::vector<int> grown;
  for (int j : ctx.active())
    if (jobs[j].state == SimJob::State::Running && jobs[j].placedOn &&
        jobs[j].running != jobs[j].placedOn &&
        jobs[j].running->totalGpus() > jobs[j].placedOn->totalGpus())
      grown.push_back(j);
  // The job with the least left gives back first: it loses the least.
  std::sort(grown.begin(), grown.end(), [&](int a, int b) {
    return jobs[a].secondsOn(*jobs[a].running) <
           jobs[b].secondsOn(*jobs[b].running);
  });
  bool moved = false;
  for (int j : grown) {
    SimJob &job = jobs[j];
    // Nearly done: finishing beats a restart.
    if (job.secondsOn(*job.running) < kGrowRestarts * ctx.restartSeconds())
      continue;
    if (ctx.move(j, *job.placedOn, Fit::BestFit))
      moved = true;
  }
  return moved;
}

std::vector<int> FrenzyPolicy::victimsFor(SimContext &ctx, int w) {
  auto &jobs = ctx.jobs();
  if (!victimsKnown) {
    // Once per decision: the running jobs, most work left first.
    victims.clear();
    for (int r : ctx.active())
      if (jobs[r].state == SimJob::State::Running)
        victims.push_back({gpuSeconds(jobs[r]), r});
    std::sort(victims.rbegin(), victims.rend());
    victimsKnown = true;
  }
  const SimJob &wj = jobs[w];
  double need = gpuSeconds(wj);
  double guard = kPreemptGuard * ctx.restartSeconds();
  std::vector<int> out;
  for (const auto &[left, r] : victims) {
    if (left < kPreemptRatio * need || out.size() == kVictimTries)
      break; // sorted: no later one has enough left
    // Never a job started or moved in this decision (with a zero restart
    // cost the guard alone would allow it).
    const SimJob &rj = jobs[r];
    if (rj.state == SimJob::State::Running &&
        rj.spec->priority <= wj.spec->priority &&
        ctx.now - rj.lastMoved >= guard && rj.lastMoved < ctx.now)
      out.push_back(r);
  }
  return out;
}

const JobOption *FrenzyPolicy::upgrade(SimContext &ctx, int j,
                                      const JobOption &best,
                                      const std::vector<int> &onlyOn) {
  auto &jobs = ctx.jobs();
  SchedCluster &c = ctx.cluster();
  const SimJob &w = jobs[j];
  double tFree = w.secondsOn(best);
  for (int r : victimsFor(ctx, j)) {
    SimJob &rj = jobs[r];
    c.release(rj.placement);
    std::vector<const JobOption *> fitting;
    double perGpu = 0;
    const JobOption *o =
        choose(w, c, onlyOn, kEfficiencyFloor, &fitting, &perGpu);
    c.take(rj.placement);
    // The waiting job's gain (t_free - t_there) must exceed what the
    // stopped job loses while the other runs there (a share of t_there:
    // it usually goes on at once on what is left, or waits for faster
    // GPUs) and its two restarts (now, and growing back later).
    if (o && tFree > (1 + kUpgradeLoss) * w.secondsOn(*o) +
                         kGrowRestarts * ctx.restartSeconds()) {
      ctx.stop(r);
      return o;
    }
  }
  return nullptr;
}

bool FrenzyPolicy::shrink(SimContext &ctx) {
  auto &jobs = ctx.jobs();
  SchedCluster &c = ctx.cluster();
  int64_t fair = std::max<int64_t>(
      1, c.totalGpus() / int64_t(std::max<size_t>(1, ctx.active().size())));
  std::vector<int> big;
  for (int j : ctx.active())
    if (jobs[j].state == SimJob::State::Running &&
        jobs[j].running->totalGpus() > fair)
      big.push_back(j);
  std::sort(big.begin(), big.end(), [&](int a, int b) {
    return jobs[a].running->totalGpus() > jobs[b].running->totalGpus();
  });
  size_t moved = 0;
  for (int j : big) {
    SimJob &job = jobs[j];
    // Not a job that just moved (no thrashing) or is nearly done.
    double guard = kShrinkGuard * ctx.restartSeconds();
    if (ctx.now - job.lastMoved < guard || job.secondsOn(*job.running) < guard)
      continue;
    double floor = kEfficiencyFloor * bestPerGpu(job);
    std::vector<const JobOption *> smaller;
    for (const JobOption &o : *job.options)
      if (o.totalGpus() <= fair &&
          1 / (o.stepSeconds * double(o.totalGpus())) >= floor)
        smaller.push_back(&o);
    std::sort(smaller.begin(), smaller.end(),
              [](const JobOption *a, const JobOption *b) {
                return a->stepSeconds < b->stepSeconds;
              });
    for (const JobOption *o : smaller)
      if (ctx.move(j, *o, Fit::BestFit)) {
        ++moved;
        break;
      }
    if (moved == kShrinkPerDecision)
      break;
  }
  return moved > 0;
}

bool FrenzyPolicy::makeRoom(SimContext &ctx) {
  auto &jobs = ctx.jobs();
  SchedCluster &c = ctx.cluster();
  std::vector<int> waiting, running;
  for (int j : ctx.active())
    (jobs[j].state == SimJob::State::Waiting ? waiting : running).push_back(j);
  std::sort(waiting.begin(), waiting.end(), [&](int a, int b) {
    return gpuSeconds(jobs[a]) < gpuSeconds(jobs[b]);
  });
  double guard = kShrinkGuard * ctx.restartSeconds();
  size_t moved = 0;
  for (int w : waiting) {
    if (moved == kShrinkPerDecision)
      break;
    // The waiting job's smallest single-type option (ties: fastest).
    const JobOption *need = nullptr;
    for (const JobOption &o : *jobs[w].options)
      if (!o.mixed() && (!need || o.totalGpus() < need->totalGpus() ||
                         (o.totalGpus() == need->totalGpus() &&
                          o.stepSeconds < need->stepSeconds)))
        need = &o;
    if (!need || c.fits(*need))
      continue;
    int t = need->gpus[0].type;
    double wSeconds = jobs[w].secondsOn(*need);
    for (int r : running) {
      SimJob &job = jobs[r];
      if (job.state != SimJob::State::Running || job.running->mixed() ||
          job.running->gpus[0].type != t || ctx.now - job.lastMoved < guard ||
          job.secondsOn(*job.running) < kMakeRoomRatio * wSeconds)
        continue;
      double floor = kGrowFloor * bestPerGpu(job);
      const JobOption *smaller = nullptr;
      for (const JobOption &o : *job.options) {
        int64_t f = job.running->totalGpus() - o.totalGpus();
        if (o.mixed() || o.gpus[0].type != t || f <= 0 ||
            c.freeOf(t) + f < need->totalGpus() ||
            1 / (o.stepSeconds * double(o.totalGpus())) < floor)
          continue;
        if (!smaller || o.stepSeconds < smaller->stepSeconds)
          smaller = &o;
      }
      if (smaller && ctx.move(r, *smaller, Fit::BestFit)) {
        if (job.placedOn && job.placedOn->totalGpus() > smaller->totalGpus())
          job.placedOn = smaller;
        ++moved;
        break;
      }
    }
  }
  return moved > 0;
}

bool FrenzyPolicy::preempt(SimContext &ctx) {
  auto &jobs = ctx.jobs();
  SchedCluster &c = ctx.cluster();
  std::vector<std::tuple<int, double, int>> waiting; // shortest first
  for (int j : ctx.active())
    if (jobs[j].state == SimJob::State::Waiting)
      waiting.emplace_back(-jobs[j].spec->priority, gpuSeconds(jobs[j]), j);
  std::sort(waiting.begin(), waiting.end());
  if (waiting.size() > kLookahead)
    waiting.resize(kLookahead);
  size_t stopped = 0;
  for (const auto &[prio, need, w] : waiting)
    for (int r : victimsFor(ctx, w)) {
      // Would its GPUs (with what is free) let the waiting job start?
      SimJob &rj = jobs[r];
      c.release(rj.placement);
      bool helps = false;
      for (const JobOption &o : *jobs[w].options)
        if ((helps = c.fits(o)))
          break;
      c.take(rj.placement);
      if (!helps)
        continue;
      ctx.stop(r);
      if (++stopped == kPreemptPerDecision)
        return true;
      break; // the next waiting job
    }
  return stopped > 0;
}

void FrenzyPolicy::grow(SimContext &ctx, double floorFactor, double gain,
                        double restarts) {
  auto &jobs = ctx.jobs();
  for (int j : ctx.active())
    if (jobs[j].state == SimJob::State::Waiting)
      return; // idle GPUs that a waiting job cannot use: keep them for it
  std::vector<int> running;
  for (int j : ctx.active())
    running.push_back(j);
  // The longest remaining job gains the most from more GPUs.
  std::sort(running.begin(), running.end(), [&](int a, int b) {
    return jobs[a].secondsOn(*jobs[a].running) >
           jobs[b].secondsOn(*jobs[b].running);
  });
  for (int j : running) {
    SchedCluster &c = ctx.cluster();
    if (c.freeGpus() == 0)
      return;
    SimJob &job = jobs[j];
    double left = job.secondsOn(*job.running) +
                  std::max(0.0, job.pausedUntil - ctx.now);
    double floor = floorFactor * bestPerGpu(job);
    int64_t budget = c.freeGpus() + job.running->totalGpus();
    std::vector<const JobOption *> better;
    for (const JobOption &o : *job.options)
      if (o.totalGpus() <= budget &&
          1 / (o.stepSeconds * double(o.totalGpus())) >= floor &&
          job.secondsOn(o) + restarts * ctx.restartSeconds() < gain * left)
        better.push_back(&o);
    std::sort(better.begin(), better.end(),
              [](const JobOption *a, const JobOption *b) {
                return a->stepSeconds < b->stepSeconds;
              });
    for (const JobOption *o : better)
      if (ctx.move(j, *o, Fit::BestFit))
        break;
  }
}
