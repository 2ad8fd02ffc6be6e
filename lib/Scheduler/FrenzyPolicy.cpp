//===- FrenzyPolicy.cpp - memory- and heterogeneity-aware placement -------===//
//
// Frenzy's HAS: users give models, not GPU counts; the planner's option
// table says which GPU mixes hold the model (memory) and how fast each runs
// (partitioner). Decisions happen at every arrival and completion, never on
// a timer, and touch only cached tables:
//  1. Waiting jobs in order of priority, then deadlines at risk (earliest
//     first), then the least GPU-seconds of work (shortest job first: the
//     order that minimises average JCT on one machine).
//  2. Each takes, among the options that fit the free GPUs now, the one
//     that finishes it soonest above an efficiency floor (throughput per
//     GPU at least 70% of the best the free GPUs offer it: extra GPUs that
//     barely help are better left to the next job in line). Shortest-first
//     with efficient sizes is the multi-GPU form of SRPT; an earlier
//     version capped each job at free GPUs / waiting jobs, which starved a
//     1,000-job queue into 2-GPU slivers. Mixed-type options let a job use
//     leftovers of two types. A job may instead wait for busy GPUs (their
//     jobs' predicted completions) when that finishes it 20% sooner.
//  3. Memory awareness: a type that some waiting job can run on alone is
//     charged extra when a job that fits elsewhere would take it, and GPUs
//     whose memory the job would leave mostly empty cost a little more.
//  4. Adaptive (the default `frenzy`), through checkpoint, re-plan and
//     resume (each move pays the restart cost):
//     - the last job in line starts on a faster option than the efficient
//       one when GPUs would sit idle otherwise; when nothing waits, running
//       jobs grow onto idle GPUs (longest remaining first, options above a
//       lower efficiency floor, only when the new finish, restart costs
//       included, is under 70% of the current one);
//     - when jobs wait, grown jobs give the extra GPUs back (to the option
//       they were placed on) before waiting jobs are placed;
//     - while at most one job waits and it fits nowhere, a running job of
//       its type with 8x more work left shrinks to make room (never a job
//       that moved within ten restart costs);
//     - preemptive shortest-first (SRPT across GPU types): a waiting job
//       takes the GPUs of a running job with 4x more work left (GPU-seconds
//       at best efficiency; of no higher priority; not moved within ten
//       restart costs), which is stopped and waits in line again (often
//       restarting at once on what is left: a shrink), when it fits
//       nowhere else, or when those GPUs finish it so much sooner than the
//       free ones that the gain beats what the stopped job loses meanwhile
//       (t_free > 1.6 t_there + two restart costs): a short job gets the
//       fast GPUs, a long one moves to the slow ones until it is alone.
//       Sia reaches a similar spread by re-solving every minute; this
//       touches only the few jobs it moves.
//     Under a long queue of similar jobs little of this fires and it is
//     the static policy.
//  5. `frenzy-static --realloc` (the older variant): a running job grows
//     onto idle GPUs when no job waits and the predicted gain exceeds the
//     checkpoint-restart cost, and jobs holding more than a fair share (GPUs / active jobs) shrink to a
//     fair-share option while jobs wait (at most two per decision, never a
//     job that moved or will finish within ten restart costs).
//
//===----------------------------------------------------------------------===//
#include "FrenzyPolicyImpl.h"

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::sched::frenzy_policy;

double FrenzyPolicy::score(const SimJob &j, const JobOption &o,
                           const SchedCluster &c,
                           const std::vector<int> &onlyOn) const {
  double s = j.secondsOn(o);
  double factor = 1;
  for (const TypeCount &tc : o.gpus) {
    const GpuType &g = c.types()[tc.type].gpu;
    if (onlyOn[tc.type] > 0)
      factor += kScarcePenalty * double(tc.count) / double(o.totalGpus());
    double empty = 1 - double(o.peakBytes) / double(g.memoryBytes);
    factor += kWastePenalty * std::max(0.0, empty) * double(tc.count) /
              double(o.totalGpus());
  }
  return s * factor;
}

void FrenzyPolicy::schedule(SimContext &ctx) {
  if (mode == Mode::Adaptive) {
    victimsKnown = false;
    size_t waiting = place(ctx);
    for (int again = 0; preempted && again < 2; ++again) {
      preempted = false;
      waiting = place(ctx);
    }
    preempted = false;
    if (waiting && giveBack(ctx))
      waiting = place(ctx);
    if (waiting && waiting <= kMakeRoomQueue && makeRoom(ctx))
      waiting = place(ctx);
    if (waiting && preempt(ctx))
      waiting = place(ctx);
    if (!waiting)
      grow(ctx, kGrowFloor, kGrowGain, kGrowRestarts);
    return;
  }
  size_t waiting = place(ctx);
  if (mode == Mode::Static)
    return;
  if (waiting && shrink(ctx))
    place(ctx);
  grow(ctx, kEfficiencyFloor, 0.8, 2);
}

const JobOption *
FrenzyPolicy::choose(const SimJob &job, const SchedCluster &c,
                     const std::vector<int> &onlyOn, double floorFactor,
                     std::vector<const JobOption *> *fitting,
                     double *perGpu) const {
  // The efficiency floor is relative to what the free GPUs offer, so a
  // job that only slow GPUs can take now still scales on them.
  int64_t free = c.freeGpus();
  for (const JobOption &o : *job.options)
    if (o.totalGpus() <= free && c.fits(o)) {
      fitting->push_back(&o);
      *perGpu = std::max(*perGpu, 1 / (o.stepSeconds * double(o.totalGpus())));
    }
  const JobOption *best = nullptr, *smallest = nullptr;
  double bestScore = INFINITY;
  for (const JobOption *o : *fitting) {
    if (!smallest || o->totalGpus() < smallest->totalGpus() ||
        (o->totalGpus() == smallest->totalGpus() &&
         o->stepSeconds < smallest->stepSeconds))
      smallest = o;
    if (1 / (o->stepSeconds * double(o->totalGpus())) < floorFactor * *perGpu)
      continue;
    double s = score(job, *o, c, onlyOn);
    if (s < bestScore)
      bestScore = s, best = o;
  }
  return best ? best : smallest;
}

size_t FrenzyPolicy::place(SimContext &ctx) {
  SchedCluster &c = ctx.cluster();
  std::vector<int> waiting;
  for (int j : ctx.active())
    if (ctx.jobs()[j].state == SimJob::State::Waiting)
      waiting.push_back(j);
  auto &jobs = ctx.jobs();
  auto atRisk = [&](const SimJob &j) {
    if (!j.spec->deadline)
      return false;
    double fastest = INFINITY;
    for (const JobOption &o : *j.options)
      fastest = std::min(fastest, j.secondsOn(o));
    return *j.spec->deadline - ctx.now < 2 * fastest;
  };
  std::vector<std::tuple<int, int, double, double, int>> keys;
  for (int j : waiting) {
    const SimJob &job = jobs[j];
    bool risk = atRisk(job);
    keys.emplace_back(-job.spec->priority, risk ? 0 : 1,
                      risk ? *job.spec->deadline : 0, gpuSeconds(job), j);
  }
  std::sort(keys.begin(), keys.end());
  // Types that some waiting job can use only alone, by how many such jobs.
  std::vector<int> onlyOn(c.types().size(), 0);
  for (int j : waiting) {
    int single = -1;
    bool several = false;
    for (const JobOption &o : *jobs[j].options)
      for (const TypeCount &tc : o.gpus) {
        if (single >= 0 && single != tc.type)
          several = true;
        single = tc.type;
      }
    if (single >= 0 && !several)
      ++onlyOn[single];
  }
  // When the running jobs' GPUs free up (predicted completions), per type:
  // lets a job wait for faster GPUs when that finishes it sooner.
  std::vector<std::pair<double, const JobOption *>> releases;
  for (int j : ctx.active()) {
    const SimJob &r = jobs[j];
    if (r.state == SimJob::State::Running)
      releases.push_back({std::max(ctx.now, r.pausedUntil) +
                              r.secondsOn(*r.running),
                          r.running});
  }
  std::sort(releases.begin(), releases.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  auto readyAt = [&](const JobOption &o) {
    std::vector<int64_t> free(c.types().size());
    for (size_t t = 0; t < free.size(); ++t)
      free[t] = c.freeOf(int(t));
    auto enough = [&] {
      for (const TypeCount &tc : o.gpus)
        if (free[tc.type] < tc.count)
          return false;
      return true;
    };
    if (enough())
      return ctx.now;
    for (const auto &[t, ro] : releases) {
      for (const TypeCount &tc : ro->gpus)
        free[tc.type] += tc.count;
      if (enough())
        return t;
    }
    return double(INFINITY);
  };
  size_t looked = 0;
  bool leftBehind = false; // a job earlier in line still waits
  for (size_t k = 0; k < keys.size(); ++k) {
    int64_t free = c.freeGpus();
    if (free == 0)
      break;
    int j = std::get<4>(keys[k]);
    SimJob &job = jobs[j];
    double perGpu = 0;
    std::vector<const JobOption *> fitting;
    const JobOption *best =
        choose(job, c, onlyOn, kEfficiencyFloor, &fitting, &perGpu);
    // A job that could start now may instead wait for busy GPUs that would
    // finish it sooner (options above the efficiency floor only); bounded
    // per decision so that a long queue stays cheap.
    if (best && looked++ < kLookahead) {
      double floor = kEfficiencyFloor * bestPerGpu(job);
      double now = ctx.now + score(job, *best, c, onlyOn);
      for (const JobOption &o : *job.options) {
        if (&o == best || 1 / (o.stepSeconds * double(o.totalGpus())) < floor)
          continue;
        double later = readyAt(o) + score(job, o, c, onlyOn);
        if (later < kWaitGain * now) {
          best = nullptr; // wait: a later decision will place it
          break;
        }
      }
    }
    // Adaptive: a short job takes faster GPUs from a much longer one
    // (which waits in line again) when that gain outweighs the loss.
    bool upgraded = false;
    if (best && mode == Mode::Adaptive && looked <= kLookahead)
      if (const JobOption *o = upgrade(ctx, j, *best, onlyOn)) {
        best = o;
        upgraded = true;
        preempted = true;
      }
    // Adaptive: the last job in line, when every job before it started,
    // starts grown onto GPUs that would sit idle otherwise (remembering the
    // efficient option to give back to).
    const JobOption *startOn = best;
    if (best && mode == Mode::Adaptive && k + 1 == keys.size() &&
        !leftBehind && !upgraded)
      startOn = grownOption(job, *best, fitting, perGpu);
    if (best && ctx.start(j, *startOn, Fit::BestFit)) {
      if (mode == Mode::Adaptive)
        job.placedOn = best;
    } else
      leftBehind = true;
  }
  size_t left = 0;
  for (int j : waiting)
    left += jobs[j].state == SimJob::State::Waiting;
  return left;
}

std::unique_ptr<Policy> frenzy::sched::makeFrenzyPolicy(bool realloc) {
  return std::make_unique<FrenzyPolicy>(realloc ? Mode::Realloc
                                                 : Mode::Static);
}

std::unique_ptr<Policy>
frenzy::sched::makeAdaptivePolicy(const PolicyOptions &) {
  return std::make_unique<FrenzyPolicy>(Mode::Adaptive);
}
