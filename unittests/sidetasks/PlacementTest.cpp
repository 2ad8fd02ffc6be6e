//===- PlacementTest.cpp - side-task files and the greedy placement -------===//
//
// The parser on well-formed text (units, unbounded, defaults) and the line
// of its errors; the greedy solver against verify() on random problems, and
// verify() refusing placements that break each rule.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/SideTasks.h"

#include <gtest/gtest.h>

#include <random>

using namespace frenzy;
using namespace frenzy::sidetasks;

namespace {

TEST(SideTaskFile, ReadsEveryField) {
  auto tasks = parseSideTasks("side_tasks:\n"
                              "  - name: a\n"
                              "    kind: process\n"
                              "    flops: 2e9\n"
                              "    bytes: 1e6\n"
                              "    seconds: {cpu: 0.25, A100-80G: 0.01}\n"
                              "    memory: 1.5GiB\n"
                              "    steps: 7\n"
                              "    priority: -2\n"
                              "  - name: b\n"
                              "    flops: 1\n"
                              "    memory: 3 MB\n"
                              "    steps: unbounded\n",
                              "t.yaml");
  ASSERT_TRUE(bool(tasks)) << llvm::toString(tasks.takeError());
  ASSERT_EQ(tasks->size(), 2u);
  const SideTask &a = (*tasks)[0], &b = (*tasks)[1];
  EXPECT_EQ(a.kind, SideTask::Process);
  EXPECT_EQ(a.flops, 2e9);
  EXPECT_EQ(a.secondsOn.at("A100-80G"), 0.01);
  EXPECT_EQ(a.memoryBytes, int64_t(1.5 * (1 << 30)));
  EXPECT_EQ(a.steps, 7);
  EXPECT_EQ(a.priority, -2);
  EXPECT_EQ(a.line, 2);
  EXPECT_EQ(b.kind, SideTask::StepFunction);
  EXPECT_EQ(b.memoryBytes, 3000000);
  EXPECT_EQ(b.steps, -1);
  EXPECT_EQ(b.line, 10);
}

TEST(SideTaskFile, ErrorsNameLineAndField) {
  auto bad = parseSideTasks("side_tasks:\n  - name: a\n    flops: 1\n"
                            "    steps: 0\n",
                            "t.yaml");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "t.yaml:4: field 'steps': '0' is not a positive integer");
}

/// A random schedule's bubbles and random tasks.
struct Random {
  bubbles::ScheduleProblem schedule;
  bubbles::BubbleAnalysis analysis;
  PlacementProblem problem;
};

std::unique_ptr<Random> randomProblem(std::mt19937 &rng) {
  auto r = std::make_unique<Random>();
  std::uniform_real_distribution<double> u(0.05, 2.0);
  int S = 2 + int(rng() % 4), M = 1 + int(rng() % 6);
  auto &stages = r->schedule.pipelines.emplace_back();
  for (int s = 0; s < S; ++s) {
    bubbles::Stage st;
    st.gpu = s % 2 ? "a" : "b";
    st.ranks = 1 + int(rng() % 2);
    st.forward = u(rng);
    st.backward = 2 * u(rng);
    st.capacityBytes = 1000;
    st.peakInFlight = S - s;
    st.activationBytes = 50;
    st.peakBytes = 300 + 50 * (S - s);
    int warm = std::min(S - s - 1, M);
    for (int i = 0; i < warm; ++i)
      st.order.push_back({false, i});
    for (int i = 0; i + warm < M; ++i) {
      st.order.push_back({false, warm + i});
      st.order.push_back({true, i});
    }
    for (int i = std::max(0, M - warm); i < M; ++i)
      st.order.push_back({true, i});
    stages.push_back(st);
  }
  auto a = bubbles::analyze(r->schedule);
  EXPECT_TRUE(bool(a));
  r->analysis = std::move(*a);
  PlacementProblem &p = r->problem;
  p.schedule = &r->schedule;
  p.analysis = &r->analysis;
  int T = 1 + int(rng() % 4);
  for (int t = 0; t < T; ++t) {
    SideTask task;
    task.name = "t" + std::to_string(t);
    task.kind = rng() % 2 ? SideTask::Process : SideTask::StepFunction;
    task.memoryBytes = int64_t(rng() % 700);
    task.steps = rng() % 3 ? -1 : 1 + int64_t(rng() % 5);
    task.priority = int64_t(rng() % 3);
    p.tasks.push_back(task);
    auto &per = p.stepSeconds.emplace_back(1);
    for (int s = 0; s < S; ++s)
      per[0].push_back(rng() % 5 ? std::optional<double>(u(rng) / 4)
                                 : std::nullopt);
  }
  return r;
}

TEST(Placement, GreedyIsValidAndExplainsWhatIsLeftOut) {
  std::mt19937 rng(1414);
  for (int trial = 0; trial < 300; ++trial) {
    auto r = randomProblem(rng);
    ASSERT_FALSE(bool(r->problem.check()));
    Placement p = placeGreedy(r->problem);
    llvm::Error e = verify(r->problem, p);
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
    double total = 0;
    for (double g : p.taskGpuSeconds)
      total += g;
    EXPECT_NEAR(total, p.gpuSeconds, 1e-9);
    EXPECT_LE(p.gpuSeconds, r->analysis.idleGpuSeconds + 1e-9);
    for (size_t t = 0; t < r->problem.tasks.size(); ++t)
      if (p.taskGpuSeconds[t] == 0) { // nothing placed: the report says why
        EXPECT_FALSE(p.why[t].empty());
      }
  }
}

TEST(Placement, VerifyRefusesBrokenSlots) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    auto r = randomProblem(rng);
    Placement p = placeGreedy(r->problem);
    if (p.slots.empty())
      continue;
    const bubbles::Bubble &b = r->analysis.bubbles[size_t(p.slots[0].bubble)];
    Placement late = p;
    late.slots[0].start = b.start + b.seconds; // past its bubble
    llvm::Error l = verify(r->problem, late);
    EXPECT_TRUE(bool(l)) << "late slot accepted";
    llvm::consumeError(std::move(l));
    Placement twice = p;
    twice.slots.push_back(p.slots[0]); // overlaps itself
    llvm::Error e = verify(r->problem, twice);
    EXPECT_TRUE(bool(e)) << "overlapping slots accepted";
    llvm::consumeError(std::move(e));
    return;
  }
  FAIL() << "no random problem had a slot";
}

} // namespace
