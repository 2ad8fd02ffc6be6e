//===- SimulatorTest.cpp - event order and metric arithmetic --------------===//
//
// Tiny hand-made traces whose schedules and metrics are worked out by hand
// in the comments; the optimal-schedule cases are the classic single-machine
// ones (shortest job first minimises the average completion time).
//
//===----------------------------------------------------------------------===//
#include "SchedTestUtil.h"

#include "frenzy/Scheduler/Metrics.h"

using namespace frenzy::sched;
using namespace frenzy::sched::test;

// A (100 steps at 1 s on all 4 GPUs) at t=0, B (50 steps) at t=10. FIFO:
// A 0-100, B 100-150. JCT 100 and 140 (avg 120), queueing 0 and 90,
// makespan 150, every GPU busy all the time.
TEST(Simulator, FifoHandComputedMetrics) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("A", 0, 100, {option(4, 1.0)}, 4);
  h.add("B", 10, 50, {option(4, 1.0)}, 4);
  SimResult r = run(c, h.build(c), "fifo");
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(r.jobs[0].start, 0);
  EXPECT_DOUBLE_EQ(r.jobs[0].finish, 100);
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);
  EXPECT_DOUBLE_EQ(r.jobs[1].finish, 150);
  Metrics m = computeMetrics(r);
  EXPECT_DOUBLE_EQ(m.avgJct, 120);
  EXPECT_DOUBLE_EQ(m.avgQueue, 45);
  EXPECT_DOUBLE_EQ(m.makespan, 150);
  EXPECT_DOUBLE_EQ(m.utilisation, 1.0);
  EXPECT_DOUBLE_EQ(m.p99Jct, 140);
}

// Completions are handled before arrivals at the same instant: C arrives
// exactly when A ends and starts at once.
TEST(Simulator, CompletionBeforeArrivalAtSameTime) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("A", 0, 100, {option(4, 1.0)}, 4);
  h.add("C", 100, 10, {option(4, 1.0)}, 4);
  SimResult r = run(c, h.build(c), "fifo");
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);
  EXPECT_DOUBLE_EQ(r.jobs[1].finish, 110);
}

// Both at t=0, each needing the whole node: long L (100 s) listed first,
// short S (10 s). FIFO runs L first: JCT 100, 110 (avg 105). The optimum
// is S first: 10, 110 (avg 60); Frenzy's shortest-first order finds it.
TEST(Simulator, FrenzyFindsShortestFirstOptimum) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("L", 0, 100, {option(4, 1.0)}, 4);
  h.add("S", 0, 10, {option(4, 1.0)}, 4);
  EXPECT_DOUBLE_EQ(computeMetrics(run(c, h.build(c), "fifo")).avgJct, 105);
  EXPECT_DOUBLE_EQ(computeMetrics(run(c, h.build(c), "frenzy")).avgJct, 60);
}

// Two equal jobs that each scale perfectly (4 GPUs twice as fast as 2, at
// 2 s/step on 2). Sharing (2 + 2 GPUs, 200 s each) gives JCT 200, 200;
// running one after the other on 4 GPUs gives 100, 200 (avg 150), the
// optimum, which Frenzy's shortest-first with efficient sizes finds.
TEST(Simulator, FrenzyRunsEqualScalableJobsInTurn) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("X", 0, 100, {option(2, 2.0), option(4, 1.0)}, 2);
  h.add("Y", 0, 100, {option(2, 2.0), option(4, 1.0)}, 2);
  SimResult r = run(c, h.build(c), "frenzy");
  EXPECT_DOUBLE_EQ(r.jobs[0].finish, 100);
  EXPECT_DOUBLE_EQ(r.jobs[1].finish, 200);
  EXPECT_EQ(r.jobs[0].gpus, 4);
  EXPECT_DOUBLE_EQ(computeMetrics(r).avgJct, 150);
}

namespace {
/// Starts waiting jobs on their first option; at t=100 moves job 0 to its
/// second option (what a reallocating policy does).
class MoveAt100 : public Policy {
public:
  const char *name() const override { return "move-at-100"; }
  void schedule(SimContext &ctx) override {
    if (ctx.now == 100) {
      EXPECT_TRUE(ctx.move(0, (*ctx.jobs()[0].options)[1], Fit::BestFit));
    }
    for (int j : ctx.active())
      if (ctx.jobs()[j].state == SimJob::State::Waiting)
        ctx.start(j, (*ctx.jobs()[j].options)[0], Fit::BestFit);
  }
};
} // namespace

// J: 1 GPU at 4 s/step until t=100 (25 of 1000 steps), then 4 GPUs at
// 1 s/step after a 50 s restart: 150 + 975 = 1125. D arrives at 100 and
// waits for J's GPUs: 1125-1126.
TEST(Simulator, RestartCostDelaysProgress) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("J", 0, 1000, {option(1, 4.0), option(4, 1.0)});
  h.add("D", 100, 1, {option(1, 1.0)});
  MoveAt100 policy;
  SimConfig cfg;
  cfg.restartSeconds = 50;
  auto r = simulate(c, h.build(c), policy, cfg);
  ASSERT_TRUE(bool(r));
  EXPECT_DOUBLE_EQ(r->jobs[0].finish, 1125);
  EXPECT_EQ(r->jobs[0].restarts, 1);
  EXPECT_DOUBLE_EQ(r->jobs[1].start, 1125);
  EXPECT_DOUBLE_EQ(r->jobs[1].finish, 1126);
  // GPU-seconds held: 100 x 1 + 1025 x 4 + 1 x 1, over 4 GPUs x 1126 s.
  EXPECT_DOUBLE_EQ(r->busyGpuSeconds, 100 + 1025 * 4 + 1);
}

// A start-up cost delays a new job's progress but not its GPUs: A holds the
// node from 0 and finishes at 5 + 100; B (after A) at 105 + 5 + 50.
TEST(Simulator, StartCostDelaysEveryFirstStart) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("A", 0, 100, {option(4, 1.0)}, 4);
  h.add("B", 10, 50, {option(4, 1.0)}, 4);
  auto p = makePolicy("fifo");
  SimConfig cfg;
  cfg.startSeconds = 5;
  auto r = simulate(c, h.build(c), *p, cfg);
  ASSERT_TRUE(bool(r));
  EXPECT_DOUBLE_EQ(r->jobs[0].finish, 105);
  EXPECT_DOUBLE_EQ(r->jobs[1].start, 105);
  EXPECT_DOUBLE_EQ(r->jobs[1].finish, 160);
  EXPECT_EQ(r->jobs[1].restarts, 0);
}

TEST(Simulator, RoundPoliciesWaitForTheRound) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("A", 0, 100, {option(2, 1.0)}, 2);
  h.add("B", 30, 10, {option(2, 1.0)}, 2);
  SimResult r = run(c, h.build(c), "gavel");
  // Gavel decides at t=0, 360, ...: B waits for the round at 360 although
  // two GPUs are free at 30.
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 360);
  EXPECT_DOUBLE_EQ(r.decisionSeconds.size(), 2u);
}

TEST(Metrics, NearestRankQuantiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i)
    v.push_back(i);
  EXPECT_DOUBLE_EQ(quantile(v, 0.95), 95);
  EXPECT_DOUBLE_EQ(quantile(v, 0.99), 99);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 50);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

// A job whose options never fit is an error naming it, not a hang.
TEST(Simulator, NeverPlacedJobIsAnError) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("big", 0, 10, {option(8, 1.0)}, 8);
  std::vector<SimJob> jobs = h.build(c);
  auto p = makePolicy("frenzy");
  auto r = simulate(c, jobs, *p);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("never placed job 'big'"),
            std::string::npos);
}
