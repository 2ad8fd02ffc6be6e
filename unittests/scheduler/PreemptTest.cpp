//===- PreemptTest.cpp - the default policy's preemptive shortest-first ---===//
//
// Hand-made queues whose outcome follows from the rules in
// FrenzyPolicy.cpp: a short job takes the GPUs of a running job with much
// more work left when it fits nowhere else, or when those GPUs are so much
// faster than the free ones that its gain outweighs the stopped job's loss;
// jobs with little work left, higher priority or a fresh start are not
// stopped; frenzy-static never stops anything.
//
//===----------------------------------------------------------------------===//
#include "SchedTestUtil.h"

using namespace frenzy::sched;
using namespace frenzy::sched::test;

namespace {

// One A100 node of 4 GPUs and one T4 node of 4 (types 0 and 1 in file
// order).
constexpr const char *kFastSlow = "nodes:\n"
                                  "  - {name: a0, gpu: A100-80G, count: 4}\n"
                                  "  - {name: t0, gpu: T4, count: 4}\n";

// A long job holding the whole node and a short one arriving at 1,000 s.
HandJobs blockedQueue(int64_t longSteps) {
  HandJobs h;
  h.add("long", 0, longSteps, {option(4, 1.0)});
  h.add("short", 1000, 100, {option(2, 1.0)});
  return h;
}

// long (job 0) restarted `restarts` times and short (job 1) started at
// `start`.
void expectStarts(const SimResult &r, int restarts, double start) {
  EXPECT_EQ(r.jobs[0].restarts, restarts);
  EXPECT_NEAR(r.jobs[1].start, start, 1e-6);
}

} // namespace

TEST(Preemption, ShortJobThatFitsNowhereStopsAMuchLongerOne) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h = blockedQueue(100000);
  SimResult r = run(c, h.build(c), "frenzy", /*restart=*/30);
  const JobResult &lng = r.jobs[0], &shrt = r.jobs[1];
  EXPECT_NEAR(shrt.start, 1000, 1e-6);
  EXPECT_NEAR(shrt.finish, 1100, 1e-6);
  // long was stopped once, resumed when short ended and paid one restart.
  EXPECT_EQ(lng.restarts, 1);
  EXPECT_NEAR(lng.finish, 100000 + 100 + 30, 1e-6);
  // frenzy-static lets short wait for long's end.
  SimResult s = run(c, h.build(c), "frenzy-static");
  expectStarts(s, 0, 100000);
}

// Work is counted in GPU-seconds at the job's best efficiency: at 1,000 s
// long has 150 steps x 4 GPUs = 600 left, under 4 x short's 100 x 2 = 800,
// so short waits; with 200 steps left (800) it would not.
TEST(Preemption, NotForAJobWithLittleWorkLeft) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h = blockedQueue(1150);
  SimResult r = run(c, h.build(c), "frenzy");
  expectStarts(r, 0, 1150);
  HandJobs more = blockedQueue(1200);
  SimResult m = run(c, more.build(c), "frenzy");
  expectStarts(m, 1, 1000);
}

TEST(Preemption, NotForAJobOfHigherPriorityOrJustStarted) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h = blockedQueue(100000);
  h.specs[0].priority = 1;
  SimResult r = run(c, h.build(c), "frenzy");
  expectStarts(r, 0, 100000);
  // Started 100 s before short arrives: within ten restart costs (300 s).
  HandJobs late = blockedQueue(100000);
  late.specs[0].arrival = 900;
  SimResult l = run(c, late.build(c), "frenzy");
  EXPECT_EQ(l.jobs[0].restarts, 0);
  EXPECT_GT(l.jobs[1].start, 1000);
}

// long runs on the A100s; short arrives while the T4s are free, but on
// them it takes 500 s against 100 s on the A100s: 500 > 1.6 x 100 + 2 x 30,
// so it takes the A100s; long, stopped, waits for them (100 s) rather than
// run on the T4s (5x slower) and resumes there.
TEST(Preemption, ShortJobTakesFastGpusFromALongOne) {
  SchedCluster c = clusterFrom(kFastSlow);
  HandJobs h;
  h.add("long", 0, 50000, {option(4, 1.0, 0), option(4, 5.0, 1)});
  h.add("short", 1000, 100, {option(4, 1.0, 0), option(4, 5.0, 1)});
  SimResult r = run(c, h.build(c), "frenzy");
  const JobResult &lng = r.jobs[0], &shrt = r.jobs[1];
  EXPECT_NEAR(shrt.start, 1000, 1e-6);
  EXPECT_NEAR(shrt.finish, 1100, 1e-6);
  EXPECT_EQ(shrt.nodes, "a0:4");
  EXPECT_EQ(lng.restarts, 1);
  EXPECT_EQ(lng.nodes, "a0:4");
  EXPECT_NEAR(lng.finish, 50000 + 100 + 30, 1e-6);
  // When the free GPUs are nearly as good (1.5 s/step: 150 < 1.6 x 100 +
  // 60), short takes them and long is left alone.
  HandJobs near;
  near.add("long", 0, 50000, {option(4, 1.0, 0), option(4, 1.5, 1)});
  near.add("short", 1000, 100, {option(4, 1.0, 0), option(4, 1.5, 1)});
  SimResult n = run(c, near.build(c), "frenzy");
  EXPECT_EQ(n.jobs[0].restarts, 0);
  EXPECT_EQ(n.jobs[1].nodes, "t0:4");
}

// With a zero restart cost the guard is zero too; a job shrunk to make
// room in this decision is still not stopped again in it (the short job
// would finish sooner on all four GPUs: 30 s against 100 s).
TEST(Preemption, NeverStopsAJobMovedInTheSameDecision) {
  SchedCluster c = clusterFrom(kOneNode);
  HandJobs h;
  h.add("long", 0, 100000, {option(4, 1.0), option(2, 1.9)});
  h.add("short", 1000, 100, {option(2, 1.0), option(4, 0.3)});
  SimResult r = run(c, h.build(c), "frenzy", /*restart=*/0);
  // Shrunk for short, grown back when it ended.
  expectStarts(r, 2, 1000);
  EXPECT_EQ(r.jobs[1].gpus, 2);
  EXPECT_NEAR(r.jobs[1].finish, 1100, 1e-6);
}
