//===- Simulator.cpp - the event loop shared by every policy --------------===//
#include "frenzy/Scheduler/Simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

using namespace frenzy;
using namespace frenzy::sched;

bool SimContext::start(int j, const JobOption &o, Fit fit) {
  SimJob &job = jobList[j];
  if (job.state != SimJob::State::Waiting)
    return false;
  std::optional<Placement> p = clusterRef.allocate(o, fit);
  if (!p)
    return false;
  job.state = SimJob::State::Running;
  job.running = &o;
  job.placement = std::move(*p);
  job.lastUpdate = now;
  job.lastMoved = now;
  // A job that ran before restarts from its checkpoint; a new one pays its
  // start-up (launcher, ranks, runtime initialisation).
  job.pausedUntil =
      now + (job.ranBefore ? config.restartSeconds
                           : config.startFor(o.totalGpus()));
  if (job.ranBefore)
    ++job.restarts;
  if (job.firstStart < 0)
    job.firstStart = now;
  job.ranBefore = true;
  return true;
}

void SimContext::stop(int j) {
  SimJob &job = jobList[j];
  if (job.state != SimJob::State::Running)
    return;
  clusterRef.release(job.placement);
  job.placement.clear();
  job.running = nullptr;
  job.state = SimJob::State::Waiting;
}

void SimContext::admit(int j) {
  jobList[j].state = SimJob::State::Waiting;
  activeList.push_back(j);
}

void SimContext::finish(int j) {
  SimJob &job = jobList[j];
  if (job.state == SimJob::State::Running)
    clusterRef.release(job.placement);
  job.state = SimJob::State::Done;
  job.finish = now;
  job.remainingSteps = 0;
  activeList.erase(std::find(activeList.begin(), activeList.end(), j));
}

bool SimContext::move(int j, const JobOption &o, Fit fit) {
  SimJob &job = jobList[j];
  clusterRef.release(job.placement);
  std::optional<Placement> p = clusterRef.allocate(o, fit);
  if (!p) {
    // Its own GPUs were just freed and nothing else ran: take them back.
    clusterRef.take(job.placement);
    return false;
  }
  job.running = &o;
  job.placement = std::move(*p);
  job.pausedUntil = now + config.restartSeconds;
  job.lastMoved = now;
  ++job.restarts;
  return true;
}

std::vector<JobOption>
frenzy::sched::userRequestOptions(const JobSpec &job,
                                  const std::vector<JobOption> &opts,
                                  const SchedCluster &c) {
  auto build = [&](int64_t request) {
    std::vector<JobOption> out;
    for (size_t t = 0; t < c.types().size(); ++t) {
      int64_t want = request;
      if (!job.userGpuType.empty() &&
          !llvm::StringRef(job.userGpuType)
               .equals_insensitive(c.types()[t].gpu.name))
        continue;
      // A request larger than the type (a trace from a bigger cluster) is
      // cut to the largest power of two the type holds.
      int64_t cap = 1;
      while (cap * 2 <= c.types()[t].total)
        cap *= 2;
      if (want > c.types()[t].total)
        want = cap;
      const JobOption *best = nullptr;
      for (const JobOption &o : opts)
        if (!o.mixed() && o.gpus[0].type == int(t) &&
            o.gpus[0].count <= want &&
            (!best || o.stepSeconds < best->stepSeconds))
          best = &o;
      if (!best)
        continue;
      JobOption u = *best;
      // The user holds all `want` GPUs; TP groups still need one node.
      u.gpus[0].count = want;
      if (want % u.gpus[0].group)
        u.gpus[0].group = 1;
      u.layout = "user request " + std::to_string(want) + "x" +
                 c.types()[t].gpu.name + " (runs " + best->layout + ")";
      out.push_back(std::move(u));
    }
    return out;
  };
  std::vector<JobOption> out = build(std::max<int64_t>(1, job.userGpus));
  for (int64_t want = 1; out.empty() && want <= c.totalGpus(); want *= 2)
    if (want > job.userGpus)
      out = build(want);
  return out;
}

int64_t frenzy::sched::stepsFromReference(
    const JobSpec &job, const std::vector<JobOption> &userOptions,
    const SchedCluster &c) {
  const JobOption *ref = nullptr;
  for (const JobOption &o : userOptions)
    if (!ref || c.types()[o.gpus[0].type].gpu.tensorTflops <
                    c.types()[ref->gpus[0].type].gpu.tensorTflops)
      ref = &o;
  if (!ref)
    return 1;
  return std::max<int64_t>(
      1, int64_t(std::ceil(job.referenceSeconds / ref->stepSeconds)));
}

std::vector<int> frenzy::sched::prepareJobs(std::vector<SimJob> &jobs,
                                            const SchedCluster &c) {
  std::vector<int> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return jobs[a].spec->arrival < jobs[b].spec->arrival;
  });
  for (SimJob &j : jobs) {
    j.remainingSteps = double(j.spec->steps);
    j.roundsOnType.assign(c.types().size(), 0);
  }
  return order;
}

// Named (not anonymous) so that SimContext can befriend it.
namespace frenzy::sched {

class Simulator {
public:
  Simulator(SchedCluster &c, std::vector<SimJob> &j, Policy &p,
            const SimConfig &cfg)
      : cluster(c), jobs(j), policy(p), ctx(c, j, cfg) {}
  llvm::Expected<SimResult> run();

private:
  double completionTime(const SimJob &j) const {
    return std::max(ctx.now, j.pausedUntil) +
           j.remainingSteps * j.running->stepSeconds;
  }
  void advance(double to);
  SchedCluster &cluster;
  std::vector<SimJob> &jobs;
  Policy &policy;
  SimContext ctx;
  SimResult result;
};

void Simulator::advance(double to) {
  for (int i : ctx.activeList) {
    SimJob &j = jobs[i];
    if (j.state != SimJob::State::Running)
      continue;
    double from = std::max(j.lastUpdate, j.pausedUntil);
    if (to > from)
      j.remainingSteps -= (to - from) / j.running->stepSeconds;
    result.busyGpuSeconds +=
        double(j.running->totalGpus()) * (to - j.lastUpdate);
    j.lastUpdate = to;
  }
  ctx.now = to;
}

llvm::Expected<SimResult> Simulator::run() {
  result.policy = policy.name();
  result.totalGpus = cluster.totalGpus();
  std::vector<int> order = prepareJobs(jobs, cluster);
  size_t nextArrival = 0, done = 0;
  double round = policy.roundSeconds(), nextRound = INFINITY;
  while (done < jobs.size()) {
    double t = nextArrival < order.size()
                   ? jobs[order[nextArrival]].spec->arrival
                   : INFINITY;
    for (int i : ctx.activeList)
      if (jobs[i].state == SimJob::State::Running)
        t = std::min(t, completionTime(jobs[i]));
    bool anyActive = !ctx.activeList.empty();
    if (round > 0 && anyActive)
      t = std::min(t, nextRound);
    if (!std::isfinite(t)) {
      const SimJob &stuck = jobs[ctx.activeList.front()];
      return llvm::createStringError(
          std::errc::invalid_argument,
          "%s: policy '%s' never placed job '%s' and nothing else runs; "
          "its options may not fit this cluster",
          stuck.spec->where.c_str(), policy.name(), stuck.spec->name.c_str());
    }
    advance(t);
    // Completions first: their GPUs are free for this event's decision.
    for (size_t k = 0; k < ctx.activeList.size();) {
      SimJob &j = jobs[ctx.activeList[k]];
      if (j.state == SimJob::State::Running &&
          completionTime(j) <= t + 1e-9 * std::max(1.0, t)) {
        j.lastLayout = j.running->layout;
        j.lastGpus = j.running->totalGpus();
        j.lastPlacement = j.placement;
        j.lastStep = j.running->stepSeconds;
        for (const NodeGrant &g : j.placement)
          j.lastNodes += (j.lastNodes.empty() ? "" : ",") +
                         cluster.nodes()[g.node].name + ":" +
                         std::to_string(g.count);
        cluster.release(j.placement);
        j.state = SimJob::State::Done;
        j.finish = t;
        j.remainingSteps = 0;
        ++done;
        ctx.activeList.erase(ctx.activeList.begin() + k);
        continue;
      }
      ++k;
    }
    bool arrived = false;
    while (nextArrival < order.size() &&
           jobs[order[nextArrival]].spec->arrival <= t) {
      int i = order[nextArrival++];
      jobs[i].state = SimJob::State::Waiting;
      ctx.activeList.push_back(i);
      arrived = true;
    }
    bool roundNow = false;
    if (round > 0) {
      if (arrived && !anyActive)
        nextRound = t; // the first round starts with the first job
      if (t >= nextRound) {
        nextRound = t + round;
        roundNow = true;
      }
    }
    if (ctx.activeList.empty())
      continue;
    // Round-based policies decide at round boundaries only (arrivals wait
    // for the next round, as in Gavel and Sia); event-driven ones at every
    // event.
    if (round > 0 && !roundNow)
      continue;
    auto t0 = std::chrono::steady_clock::now();
    policy.schedule(ctx);
    auto t1 = std::chrono::steady_clock::now();
    result.decisionSeconds.push_back(
        std::chrono::duration<double>(t1 - t0).count());
    // Gavel's bookkeeping: the rounds each job received per type.
    if (round > 0)
      for (int i : ctx.activeList) {
        jobs[i].roundsActive += 1;
        if (jobs[i].state == SimJob::State::Running)
          for (const TypeCount &tc : jobs[i].running->gpus)
            jobs[i].roundsOnType[tc.type] += 1;
      }
  }
  for (const SimJob &j : jobs) {
    JobResult r;
    r.name = j.spec->name;
    r.arrival = j.spec->arrival;
    r.start = j.firstStart;
    r.finish = j.finish;
    r.restarts = j.restarts;
    r.layout = j.lastLayout;
    r.nodes = j.lastNodes;
    r.gpus = j.lastGpus;
    r.placement = j.lastPlacement;
    r.stepSeconds = j.lastStep;
    result.jobs.push_back(std::move(r));
  }
  return std::move(result);
}

} // namespace frenzy::sched

llvm::Expected<SimResult> frenzy::sched::simulate(SchedCluster cluster,
                                                  std::vector<SimJob> jobs,
                                                  Policy &policy,
                                                  const SimConfig &config) {
  Simulator sim(cluster, jobs, policy, config);
  return sim.run();
}
