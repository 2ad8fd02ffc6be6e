//===- PolicyTest.cpp - invariants every policy must keep -----------------===//
//
// Each policy runs a seeded synthetic queue on a three-type cluster under a
// wrapper that checks, after every decision, that no node gives out more
// GPUs than it has and that the running jobs' placements add up to exactly
// the GPUs the ledger says are taken. FIFO must also start jobs in arrival
// order.
//
//===----------------------------------------------------------------------===//
#include "SchedTestUtil.h"

#include "frenzy/Scheduler/Metrics.h"
#include "frenzy/Scheduler/Options.h"
#include "frenzy/Scheduler/Traces.h"

using namespace frenzy::sched;
using namespace frenzy::sched::test;

namespace {

constexpr const char *kThreeTypes =
    "nodes:\n"
    "  - {name: a0, gpu: A100-80G, count: 8, link: nvlink}\n"
    "  - {name: a1, gpu: A100-80G, count: 4, link: nvlink}\n"
    "  - {name: r0, gpu: RTX-A6000, count: 8}\n"
    "  - {name: t0, gpu: T4, count: 4}\n"
    "  - {name: t1, gpu: T4, count: 4}\n"
    "  - {name: t2, gpu: T4, count: 4}\n";

class Checked : public Policy {
public:
  Checked(std::unique_ptr<Policy> p) : inner(std::move(p)) {}
  const char *name() const override { return inner->name(); }
  double roundSeconds() const override { return inner->roundSeconds(); }
  void schedule(SimContext &ctx) override {
    inner->schedule(ctx);
    const SchedCluster &c = ctx.cluster();
    std::vector<int64_t> held(c.nodes().size(), 0);
    for (int j : ctx.active()) {
      const SimJob &job = ctx.jobs()[j];
      if (job.state != SimJob::State::Running)
        continue;
      int64_t sum = 0;
      for (const NodeGrant &g : job.placement) {
        held[g.node] += g.count;
        sum += g.count;
        EXPECT_EQ(c.nodes()[g.node].type >= 0, true);
      }
      EXPECT_EQ(sum, job.running->totalGpus()) << job.spec->name;
    }
    for (size_t n = 0; n < held.size(); ++n) {
      EXPECT_LE(held[n], c.nodes()[n].count) << c.nodes()[n].name;
      EXPECT_EQ(held[n], c.nodes()[n].count - c.nodes()[n].free)
          << c.nodes()[n].name;
      EXPECT_GE(c.nodes()[n].free, 0);
    }
    ++decisions;
  }
  std::unique_ptr<Policy> inner;
  int decisions = 0;
};

struct Queue {
  SchedCluster cluster = clusterFrom(kThreeTypes);
  OptionCache cache{cluster};
  std::vector<JobSpec> specs;
  std::vector<SimJob> jobs;
  explicit Queue(size_t n) {
    SyntheticOptions o;
    o.jobs = n;
    o.seed = 7;
    o.jobsPerHour = 20;
    for (JobSpec &j : syntheticTrace(o)) {
      auto opts = cache.get(j);
      if (!opts) {
        llvm::consumeError(opts.takeError());
        continue;
      }
      SimJob s;
      s.options = *opts;
      s.userOptions = userRequestOptions(j, **opts, cluster);
      if (s.userOptions.empty())
        continue;
      j.steps = stepsFromReference(j, s.userOptions, cluster);
      specs.push_back(j);
      jobs.push_back(std::move(s));
    }
    for (size_t i = 0; i < jobs.size(); ++i)
      jobs[i].spec = &specs[i];
  }
};

} // namespace

class EveryPolicy : public ::testing::TestWithParam<const char *> {};

TEST_P(EveryPolicy, NeverOverAllocatesAndFinishesEveryJob) {
  Queue q(45); // 45, not more: Sia's MILP solves one program per round
  ASSERT_GT(q.jobs.size(), 30u);
  // NAME[+realloc][:greedy]
  std::string name = GetParam();
  PolicyOptions o;
  if (name.size() > 7 && name.substr(name.size() - 7) == ":greedy") {
    o.baseline = BaselineMode::Greedy;
    name.resize(name.size() - 7);
  }
  if (name.size() > 8 && name.substr(name.size() - 8) == "+realloc") {
    o.realloc = true;
    name.resize(name.size() - 8);
  }
  if (name == "gavel-sum") {
    o.gavel = GavelObjective::MaxSumThroughput;
    name = "gavel";
  }
  Checked policy(makePolicy(name, o));
  auto r = simulate(q.cluster, q.jobs, policy);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_GT(policy.decisions, 0);
  for (const JobResult &j : r->jobs) {
    EXPECT_GE(j.start, j.arrival) << j.name;
    EXPECT_GT(j.finish, j.start) << j.name;
  }
  Metrics m = computeMetrics(*r);
  EXPECT_EQ(m.jobs, q.jobs.size());
  EXPECT_GT(m.utilisation, 0);
  EXPECT_LE(m.utilisation, 1.0 + 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Scheduler, EveryPolicy,
                         ::testing::Values("fifo", "gavel", "gavel:greedy",
                                           "gavel-sum", "sia", "sia:greedy",
                                           "frenzy", "frenzy+realloc",
                                           "frenzy-static"));

TEST(FifoPolicy, StartsInArrivalOrder) {
  Queue q(60);
  SimResult r = run(q.cluster, q.jobs, "fifo");
  std::vector<std::pair<double, double>> byArrival;
  for (const JobResult &j : r.jobs)
    byArrival.push_back({j.arrival, j.start});
  std::stable_sort(byArrival.begin(), byArrival.end());
  for (size_t i = 1; i < byArrival.size(); ++i)
    EXPECT_GE(byArrival[i].second, byArrival[i - 1].second) << i;
}

TEST(FifoPolicy, UsesTheUserRequestFirstFit) {
  SchedCluster c = clusterFrom(kThreeTypes);
  HandJobs h;
  // Type 0 (A100) first in the file: a 2-GPU request lands on node a0.
  h.add("j", 0, 10, {option(1, 2.0, 0), option(2, 1.0, 0)}, 2);
  SimResult r = run(c, h.build(c), "fifo");
  EXPECT_EQ(r.jobs[0].gpus, 2);
  EXPECT_EQ(r.jobs[0].nodes, "a0:2");
}

TEST(SchedCluster, AllocateKeepsTpGroupsOnOneNodeAndReleases) {
  SchedCluster c = clusterFrom(kThreeTypes);
  JobOption o = option(12, 1.0, 0);
  o.gpus[0].group = 4;
  auto p = c.allocate(o, Fit::BestFit);
  ASSERT_TRUE(p);
  EXPECT_EQ(c.freeOf(0), 0);
  for (const NodeGrant &g : *p)
    EXPECT_EQ(g.count % 4, 0);
  EXPECT_FALSE(c.allocate(option(1, 1.0, 0), Fit::FirstFit));
  c.release(*p);
  EXPECT_EQ(c.freeOf(0), 12);
  EXPECT_EQ(c.freeGpus(), c.totalGpus());
  // Groups of 8 do not fit the 4-GPU node: 16 in groups of 8 is refused
  // even though... only 12 exist; 8 in a group of 8 goes to a0.
  JobOption eight = option(8, 1.0, 0);
  eight.gpus[0].group = 8;
  auto p8 = c.allocate(eight, Fit::BestFit);
  ASSERT_TRUE(p8);
  EXPECT_EQ(c.nodes()[(*p8)[0].node].name, "a0");
  JobOption four = option(4, 1.0, 0);
  four.gpus[0].group = 8;
  EXPECT_FALSE(c.fits(four)); // 4 is not a whole group of 8
}
