//===- SiaPolicy.cpp - goodput-based reallocation each round (Sia) --------===//
//
// Sia (Jayaram Subramanya et al., SOSP'23): every 60-second round it
// re-decides every job's GPU type and count from goodput estimates,
// restart-aware, as one integer program:
//  - configurations: one GPU type per job (Sia never mixes types within a
//    job), each GPU count the job's option table has on that type (its
//    fastest option of that count);
//  - goodput g of a configuration, normalised by the job's goodput on its
//    weakest smallest configuration (the minimum over types of the
//    smallest configuration's goodput: Sia's normalisation, so g >= 1);
//    with a fixed global batch goodput is throughput;
//  - restart penalty (Sia's, from Pollux): a running job's goodput on any
//    configuration other than its current one is scaled by
//    (age - restarts x delta) / (age + delta), 1 while age < delta, delta
//    the checkpoint-restart cost and age the time since it first started;
//  - objective (Sia's with p = -0.5, lambda_n = 1.1, the artifact's
//    defaults): minimise sum over chosen configurations of g^p plus
//    lambda_n per job left without GPUs, i.e. maximise
//    sum x[j][c] (lambda_n - g[j][c]^p); at most one configuration per
//    job, GPUs per type within the cluster's count. Solved with CBC
//    (SiaProgram.cpp), seeded by the greedy solution; --baseline-mode=greedy
//    keeps the greedy solution (the fast mode).
// Placement of the chosen counts on nodes is applyTargets' (a target that
// fragmentation prevents falls back to the job's fastest smaller option).
//
//===----------------------------------------------------------------------===//
#include "Policies.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace frenzy;
using namespace frenzy::sched;

namespace {

constexpr double kFairnessP = -0.5; // Sia's p
constexpr double kLambdaN = 1.1;    // Sia's penalty for a job left out
constexpr double kGoodputClip = 3000;

class SiaPolicy : public Policy {
public:
  explicit SiaPolicy(const PolicyOptions &o) : opts(o) {}
  const char *name() const override {
    return opts.baseline == BaselineMode::Greedy ? "sia-greedy" : "sia";
  }
  double roundSeconds() const override { return 60; }
  void schedule(SimContext &ctx) override;

private:
  PolicyOptions opts;
  bool warned = false;
};

void SiaPolicy::schedule(SimContext &ctx) {
  const std::vector<int> &active = ctx.active();
  auto &jobs = ctx.jobs();
  const SchedCluster &c = ctx.cluster();
  size_t n = active.size();
  Assignment a;
  a.jobs.resize(n);
  for (const SchedType &t : c.types())
    a.capacity.push_back(t.total);
  for (size_t k = 0; k < n; ++k) {
    const SimJob &j = jobs[active[k]];
    // The fastest single-type option per (type, count).
    std::map<std::pair<int, int64_t>, const JobOption *> configs;
    for (const JobOption &o : *j.options) {
      if (o.mixed())
        continue;
      auto &slot = configs[{o.gpus[0].type, o.totalGpus()}];
      if (!slot || o.stepSeconds < slot->stepSeconds)
        slot = &o;
    }
    // Normalisation: the weakest type's smallest configuration.
    std::map<int, const JobOption *> smallest;
    for (const auto &[key, o] : configs)
      if (!smallest.count(key.first))
        smallest[key.first] = o; // map order: smallest count first
    double base = INFINITY;
    for (const auto &[t, o] : smallest)
      base = std::min(base, 1 / o->stepSeconds);
    double factor = 1;
    if (j.state == SimJob::State::Running) {
      double age = ctx.now - j.firstStart, d = ctx.restartSeconds();
      if (age >= d)
        factor = std::max(0.0, (age - double(j.restarts) * d) / (age + d));
    }
    for (const auto &[key, o] : configs) {
      double g = 1 / o->stepSeconds / base;
      if (j.state == SimJob::State::Running && j.running != o)
        g *= factor;
      double cost = g > 0 ? std::min(kGoodputClip, std::pow(g, kFairnessP))
                          : kGoodputClip;
      double value = kLambdaN - cost;
      if (value > 0)
        a.jobs[k].push_back({o, key.first, key.second, value});
    }
  }
  std::vector<int> choice = assignGreedy(a);
  if (opts.baseline == BaselineMode::Program) {
    auto milp = assignMilp(a, choice, opts.solverSeconds);
    if (milp)
      choice = std::move(*milp);
    else if (!warned) { // keep the greedy round; say so once
      llvm::errs() << "frenzy-sched: warning: sia: "
                   << llvm::toString(milp.takeError())
                   << "; this round keeps the greedy allocation\n";
      warned = true;
    } else
      llvm::consumeError(milp.takeError());
  }
  std::vector<const JobOption *> target(n, nullptr);
  std::vector<const std::vector<JobOption> *> fallback(n);
  for (size_t k = 0; k < n; ++k) {
    if (choice[k] >= 0)
      target[k] = a.jobs[k][size_t(choice[k])].option;
    fallback[k] = jobs[active[k]].options;
  }
  applyTargets(ctx, target, fallback);
}

} // namespace

std::unique_ptr<Policy> frenzy::sched::makeSiaPolicy(const PolicyOptions &o) {
  return std::make_unique<SiaPolicy>(o);
}
