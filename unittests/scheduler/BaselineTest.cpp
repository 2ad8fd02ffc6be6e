//===- BaselineTest.cpp - Sia's MILP, Gavel's LP and adaptive growth ------===//
//
// The programs the faithful baselines solve each round, on cases whose
// answers are known by hand, and the default policy's growth into idle
// GPUs and give-back when a job waits.
//
//===----------------------------------------------------------------------===//
#include "SchedTestUtil.h"

#include "../../lib/Scheduler/Policies.h"

using namespace frenzy::sched;
using namespace frenzy::sched::test;

// Greedy by value per GPU takes B (0.3/GPU) first, then C, and misses the
// optimum, A alone (1.0 > 0.3 + 0.65); the MILP finds it.
TEST(SiaProgram, MilpBeatsGreedyWhereGreedyIsSuboptimal) {
  Assignment a;
  a.capacity = {4};
  a.jobs = {{{nullptr, 0, 4, 1.0}}, {{nullptr, 0, 1, 0.3}},
            {{nullptr, 0, 3, 0.65}}};
  std::vector<int> greedy = assignGreedy(a);
  EXPECT_EQ(greedy, (std::vector<int>{-1, 0, 0}));
  auto milp = assignMilp(a, greedy, 5);
  ASSERT_TRUE(bool(milp)) << llvm::toString(milp.takeError());
  EXPECT_EQ(*milp, (std::vector<int>{0, -1, -1}));
}

// One configuration per job and GPUs per type are respected on two types.
TEST(SiaProgram, OneConfigurationPerJobWithinEachType) {
  Assignment a;
  a.capacity = {2, 4};
  a.jobs = {{{nullptr, 0, 2, 0.5}, {nullptr, 1, 4, 0.9}},
            {{nullptr, 1, 4, 0.8}, {nullptr, 1, 2, 0.4}}};
  auto milp = assignMilp(a, std::vector<int>(2, -1), 5);
  ASSERT_TRUE(bool(milp)) << llvm::toString(milp.takeError());
  // 0.5 + 0.8 = 1.3 beats 0.9 + 0.4 = 1.3? equal; both use all GPUs: the
  // objective is what must hold.
  double total = 0;
  std::vector<int64_t> used(2, 0);
  for (size_t k = 0; k < 2; ++k)
    if ((*milp)[k] >= 0) {
      const Candidate &c = a.jobs[k][size_t((*milp)[k])];
      total += c.value;
      used[size_t(c.type)] += c.count;
    }
  EXPECT_NEAR(total, 1.3, 1e-9);
  EXPECT_LE(used[0], 2);
  EXPECT_LE(used[1], 4);
}

// Two jobs, one GPU of one type: max-min fairness splits it in halves;
// max sum throughput gives it to the job that runs faster there.
TEST(GavelProgram, MaxMinSplitsAndMaxSumPrefersTheFasterJob) {
  std::vector<std::vector<double>> tput = {{1.0}, {0.5}};
  std::vector<std::vector<int64_t>> count = {{1}, {1}};
  auto fair = gavelShares(tput, count, {1}, GavelObjective::MaxMin, 5);
  ASSERT_TRUE(bool(fair)) << llvm::toString(fair.takeError());
  // Equal levels: 1.0 x0 = 0.5 x1 with x0 + x1 = 1 -> x0 = 1/3.
  EXPECT_NEAR((*fair)[0][0], 1.0 / 3, 1e-6);
  EXPECT_NEAR((*fair)[1][0], 2.0 / 3, 1e-6);
  auto sum = gavelShares(tput, count, {1}, GavelObjective::MaxSumThroughput, 5);
  ASSERT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  EXPECT_NEAR((*sum)[0][0], 1, 1e-6);
  EXPECT_NEAR((*sum)[1][0], 0, 1e-6);
}

// A job needing 4 GPUs of a type with 2 gets no share of it.
TEST(GavelProgram, CapacityCountsTheRequest) {
  auto x = gavelShares({{1.0, 0.5}}, {{4, 4}}, {2, 8},
                       GavelObjective::MaxMin, 5);
  ASSERT_TRUE(bool(x)) << llvm::toString(x.takeError());
  EXPECT_LE(4 * (*x)[0][0], 2 + 1e-6);
  EXPECT_NEAR((*x)[0][0] + (*x)[0][1], 1, 1e-6);
}

namespace {
struct GrowQueue {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  GrowQueue() {
    // long: 2 GPUs at 1 s/step or 4 at 0.55; short finishes at 10 s;
    // late arrives at 2,000 s and needs 2 GPUs.
    h.add("long", 0, 5000, {option(2, 1.0), option(4, 0.55)});
    h.add("short", 0, 10, {option(2, 1.0)});
    h.add("late", 2000, 100, {option(2, 1.0)});
  }
};
} // namespace

TEST(AdaptivePolicy, GrowsIntoIdleGpusAndGivesThemBackWhenAJobWaits) {
  GrowQueue q;
  // Both start on 2 GPUs (short is shortest-first; long takes what is
  // left).
  SimResult r = run(q.c, q.h.build(q.c), "frenzy");
  const JobResult &lng = r.jobs[0], &late = r.jobs[2];
  EXPECT_EQ(r.jobs[1].start, 0);
  // Grew when short finished, went back to 2 GPUs for late, grew again
  // when late finished: three moves, ending on 4 GPUs.
  EXPECT_EQ(lng.restarts, 3);
  EXPECT_EQ(lng.gpus, 4);
  // late starts at its arrival (long gave GPUs back), not when long ends.
  EXPECT_NEAR(late.start, 2000, 1e-6);
  // Growth paid off: faster than 5,000 s on 2 GPUs all along.
  SimResult s = run(q.c, q.h.build(q.c), "frenzy-static");
  EXPECT_EQ(s.jobs[0].restarts, 0);
  EXPECT_LT(lng.finish, s.jobs[0].finish);
}
