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
#include "Policies.h"

#include <algorithm>
#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

namespace {

constexpr double kEfficiencyFloor = 0.7;
constexpr double kScarcePenalty = 0.5;
constexpr double kWastePenalty = 0.05;
constexpr double kShrinkGuard = 10;   // x restart cost: min run between moves
constexpr size_t kShrinkPerDecision = 2;
constexpr size_t kLookahead = 16;  // jobs per decision that may wait
constexpr double kWaitGain = 0.8;  // only when that finishes them 20% sooner
// Adaptive growth and preemption: chosen on the training queues (synthetic
// seeds 1 and 2 at 8, 15 and 30 jobs/h, Philly from 2017-10-03), reported
// on held-out ones (docs/scheduler.md).
constexpr double kGrowFloor = 0.3;   // per-GPU throughput vs the job's best
constexpr double kGrowGain = 0.7;    // grow when it finishes in < 70% of now
constexpr double kGrowRestarts = 2;  // ... counting this many restart costs
constexpr double kMakeRoomRatio = 8; // the shrunk job has 8x more work left
constexpr double kMakeRoomQueue = 1; // only while this few wait
constexpr double kPreemptRatio = 4;  // a stopped job has 4x the work left
constexpr double kPreemptGuard = 10; // x restart cost: min run before a stop
constexpr size_t kPreemptPerDecision = 4; // stops for jobs that fit nowhere
constexpr size_t kVictimTries = 4;   // running jobs tried per waiting job
constexpr double kUpgradeLoss = 0.6; // stopped job's loss, share of t_there

enum class Mode { Static, Realloc, Adaptive };

class FrenzyPolicy : public Policy {
public:
  explicit FrenzyPolicy(Mode mode) : mode(mode) {}
  const char *name() const override {
    return mode == Mode::Adaptive  ? "frenzy"
           : mode == Mode::Realloc ? "frenzy-static+realloc"
                                   : "frenzy-static";
  }
  void schedule(SimContext &ctx) override;

private:
  /// The job's best throughput per GPU, steps/s/GPU.
  static double bestPerGpu(const SimJob &j) {
    double best = 0;
    for (const JobOption &o : *j.options)
      best = std::max(best, 1 / (o.stepSeconds * double(o.totalGpus())));
    return best;
  }
  static double gpuSeconds(const SimJob &j) {
    return j.remainingSteps / bestPerGpu(j);
  }
  double score(const SimJob &j, const JobOption &o, const SchedCluster &c,
               const std::vector<int> &onlyOn) const;
  /// The fastest of `fitting` with more GPUs than `best`, above the growth
  /// floor, that finishes the job in under kGrowGain of `best`'s time;
  /// `best` when none. (More GPUs, not merely other ones: `best` already
  /// weighed scarce types and memory, and give-back returns extra GPUs.)
  const JobOption *grownOption(const SimJob &j, const JobOption &best,
                               const std::vector<const JobOption *> &fitting,
                               double perGpu) const {
    const JobOption *out = &best;
    for (const JobOption *o : fitting)
      if (o->totalGpus() > best.totalGpus() &&
          1 / (o->stepSeconds * double(o->totalGpus())) >= kGrowFloor * perGpu &&
          o->stepSeconds < kGrowGain * best.stepSeconds &&
          o->stepSeconds < out->stepSeconds)
        out = o;
    return out;
  }
  /// The option a job takes on the free GPUs: the best score among those
  /// whose throughput per GPU is at least floorFactor of the best the free
  /// GPUs offer it (the smallest when none); nullptr when none fits.
  /// Fills the fitting options and that best per-GPU throughput.
  const JobOption *choose(const SimJob &job, const SchedCluster &c,
                          const std::vector<int> &onlyOn, double floorFactor,
                          std::vector<const JobOption *> *fitting,
                          double *perGpu) const;
  /// Adaptive: an option for waiting job j on GPUs of a running job with
  /// kPreemptRatio x more work left, which is stopped (and waits in line
  /// again), when j on it finishes enough sooner than on `best` (the free
  /// GPUs' option) to outweigh what the stopped job loses; else nullptr.
  const JobOption *upgrade(SimContext &ctx, int j, const JobOption &best,
                           const std::vector<int> &onlyOn);
  /// Running jobs a waiting job `w` may stop: at most kVictimTries, with
  /// kPreemptRatio x its work left or more, not moved within the guard, of
  /// no higher priority; most work left first.
  std::vector<int> victimsFor(SimContext &ctx, int w);
  bool preempted = false; // place() stopped a job: place again
  std::vector<std::pair<double, int>> victims; // this decision's, sorted
  bool victimsKnown = false;
  /// Places waiting jobs; returns how many still wait.
  size_t place(SimContext &ctx);
  /// Moves jobs holding more than a fair share of the cluster to smaller
  /// options while jobs wait; true when one moved.
  bool shrink(SimContext &ctx);
  void grow(SimContext &ctx, double floorFactor, double gain,
            double restarts);
  /// Adaptive: jobs that grew go back to the option they were placed on;
  /// true when one moved.
  bool giveBack(SimContext &ctx);
  /// Adaptive, shortest-remaining-first: a waiting job that fits nowhere
  /// gets GPUs from a running job with much more work left, which shrinks
  /// to a smaller option of the same type (still above the growth floor);
  /// true when one moved. Tried before preempt(): a shrink keeps the job
  /// running.
  bool makeRoom(SimContext &ctx);
  /// Adaptive, preemptive shortest-first: a waiting job that fits nowhere
  /// stops the running job with the most work left (at least
  /// kPreemptRatio x its own, in GPU-seconds at best efficiency) when that
  /// job's GPUs would let it start; the stopped job waits in line again
  /// (and may restart at once on what is left, a shrink). True when one
  /// stopped.
  bool preempt(SimContext &ctx);
  Mode mode;
};

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

} // namespace

std::unique_ptr<Policy> frenzy::sched::makeFrenzyPolicy(bool realloc) {
  return std::make_unique<FrenzyPolicy>(realloc ? Mode::Realloc
                                                 : Mode::Static);
}

std::unique_ptr<Policy>
frenzy::sched::makeAdaptivePolicy(const PolicyOptions &) {
  return std::make_unique<FrenzyPolicy>(Mode::Adaptive);
}
