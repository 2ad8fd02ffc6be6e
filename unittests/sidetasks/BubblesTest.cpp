//===- BubblesTest.cpp - the bubble analysis on generated schedules -------===//
//
// Properties that must hold for any schedule: every stage's busy and idle
// time add up to the step, bubbles never overlap work, and uniform stages
// reproduce the closed form (p - 1)/(m + p - 1) for GPipe and 1F1B alike.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Bubbles/Bubbles.h"

#include <gtest/gtest.h>

#include <random>

using namespace frenzy::bubbles;

namespace {

/// The same orders frenzy-pipeline-schedule writes (StagePrograms.h).
std::vector<Phase> order(bool gpipe, int s, int S, int M) {
  std::vector<Phase> o;
  int warm = gpipe ? M : std::min(S - s - 1, M);
  for (int i = 0; i < warm; ++i)
    o.push_back({false, i});
  for (int i = 0; i + warm < M; ++i) {
    o.push_back({false, warm + i});
    o.push_back({true, i});
  }
  for (int i = std::max(0, M - warm); i < M; ++i)
    o.push_back({true, i});
  return o;
}

ScheduleProblem pipeline(bool gpipe, const std::vector<double> &fwd,
                         const std::vector<double> &bwd, int M) {
  ScheduleProblem p;
  p.kind = gpipe ? "gpipe" : "1f1b";
  auto &stages = p.pipelines.emplace_back();
  int S = int(fwd.size());
  for (int s = 0; s < S; ++s) {
    Stage st;
    st.gpu = "cpu";
    st.forward = fwd[s];
    st.backward = bwd[s];
    st.capacityBytes = 1 << 30;
    st.peakBytes = 1 << 28;
    st.peakInFlight = gpipe ? M : S - s;
    st.activationBytes = 1 << 20;
    st.order = order(gpipe, s, S, M);
    stages.push_back(st);
  }
  return p;
}

TEST(Bubbles, UniformStagesGiveTheClosedForm) {
  for (bool gpipe : {false, true})
    for (int S : {2, 3, 5, 8})
      for (int M : {1, 2, 4, 7, 16}) {
        auto a = analyze(pipeline(gpipe, std::vector<double>(S, 0.7),
                                  std::vector<double>(S, 1.3), M));
        ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
        EXPECT_NEAR(a->fraction, double(S - 1) / double(M + S - 1), 1e-12)
            << (gpipe ? "gpipe" : "1f1b") << " S=" << S << " M=" << M;
        EXPECT_NEAR(a->stepSeconds, (M + S - 1) * 2.0, 1e-9);
      }
}

TEST(Bubbles, IdleAndBusyFillTheStepWithoutOverlap) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> t(0.1, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    int S = 1 + int(rng() % 6), M = 1 + int(rng() % 9);
    std::vector<double> f(S), b(S);
    for (int s = 0; s < S; ++s) {
      f[s] = t(rng);
      b[s] = t(rng);
    }
    ScheduleProblem p = pipeline(rng() % 2, f, b, M);
    p.allReduceSeconds = t(rng);
    p.optimizerSeconds = t(rng);
    auto a = analyze(p);
    ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
    for (const StageTimeline &tl : a->stages) {
      double busy = 0;
      for (const Busy &w : tl.busy)
        busy += w.end - w.start;
      EXPECT_NEAR(busy + tl.idleSeconds, a->stepSeconds, 1e-9);
      for (const Bubble &bb : a->bubbles) {
        if (bb.pipeline != tl.pipeline || bb.stage != tl.stage)
          continue;
        EXPECT_GT(bb.seconds, 0);
        EXPECT_GE(bb.inFlight, 0);
        EXPECT_LE(bb.freeBytes, p.pipelines[0][tl.stage].capacityBytes);
        for (const Busy &w : tl.busy)
          EXPECT_TRUE(bb.start + bb.seconds <= w.start + 1e-9 ||
                      bb.start >= w.end - 1e-9)
              << "bubble at " << bb.start << " overlaps " << w.what;
      }
    }
  }
}

TEST(Bubbles, RefusesBadOrdersInOneLine) {
  ScheduleProblem p = pipeline(false, {1, 1}, {2, 2}, 2);
  p.pipelines[0][1].order = {{true, 0}, {false, 0}, {false, 1}, {true, 1}};
  auto a = analyze(p);
  ASSERT_FALSE(bool(a));
  EXPECT_EQ(llvm::toString(a.takeError()),
            "pipeline 0 stage 1: B0 repeats or is a backward before its "
            "forward");
  // Orders that are each valid but wait on each other forever.
  ScheduleProblem q = pipeline(false, {1, 1}, {2, 2}, 2);
  q.pipelines[0][0].order = {{false, 1}, {false, 0}, {true, 0}, {true, 1}};
  q.pipelines[0][1].order = {{false, 0}, {true, 0}, {false, 1}, {true, 1}};
  auto b = analyze(q);
  ASSERT_TRUE(bool(b)); // stage 0 runs F1 first: stage 1 simply waits
  q.pipelines[0][0].order = {{false, 0}, {true, 0}, {false, 1}, {true, 1}};
  q.pipelines[0][1].order = {{false, 1}, {true, 1}, {false, 0}, {true, 0}};
  auto c = analyze(q);
  ASSERT_FALSE(bool(c));
  EXPECT_NE(llvm::toString(c.takeError()).find("deadlocks"),
            std::string::npos);
}

} // namespace
