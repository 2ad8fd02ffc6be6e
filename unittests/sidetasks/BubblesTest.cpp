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
    // Transfers too, on about half of the trials (receives and sends are
    // busy time, so the sum still holds).
    if (trial % 2)
      for (Stage &st : p.pipelines[0])
        st.sendSeconds = t(rng) / 4;
    // And a tied gradient from the last stage to the first on a third.
    if (trial % 3 == 0 && S > 1)
      p.pipelines[0][size_t(S - 1)].backwardSends.push_back({0, t(rng) / 4});
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

// Two stages, one micro-batch, forward 1 s and backward 2 s, a transfer of
// 0.5 s each way. Stage 0: F0 [0, 1], send [1, 1.5], waits, receives the
// gradient [5.5, 6], B0 [6, 8]. Stage 1: waits 1.5 s for the send, receives
// [1.5, 2], F0 [2, 3], B0 [3, 5], sends back [5, 5.5], waits to 8. Without
// the transfer the step is 6 s and each stage idles 3 s: the transfer adds
// its 2 x 0.5 s round trip to the step and 1 s of idle to each stage.
TEST(Bubbles, TransfersDelayTheNeighbourAndKeepBothEndsBusy) {
  ScheduleProblem p = pipeline(false, {1, 1}, {2, 2}, 1);
  auto before = analyze(p);
  ASSERT_TRUE(bool(before));
  EXPECT_NEAR(before->stepSeconds, 6, 1e-12);
  p.pipelines[0][0].sendSeconds = 0.5;
  p.pipelines[0][1].sendSeconds = 7; // the last stage sends to no one
  auto a = analyze(p);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  EXPECT_NEAR(a->stepSeconds, 8, 1e-12);
  ASSERT_EQ(a->stages.size(), 2u);
  EXPECT_NEAR(a->stages[0].idleSeconds, 4, 1e-12);
  EXPECT_NEAR(a->stages[1].idleSeconds, 4, 1e-12);
  ASSERT_EQ(a->bubbles.size(), 3u);
  EXPECT_NEAR(a->bubbles[0].start, 1.5, 1e-12); // stage 0 after its send
  EXPECT_NEAR(a->bubbles[0].seconds, 4, 1e-12);
  EXPECT_EQ(a->bubbles[0].before, "B0");
  EXPECT_NEAR(a->bubbles[1].seconds, 1.5, 1e-12); // stage 1's warm-up
  EXPECT_NEAR(a->bubbles[2].start, 5.5, 1e-12);   // after its send back
  std::vector<std::string> s1;
  for (const Busy &w : a->stages[1].busy)
    s1.push_back(w.what);
  EXPECT_EQ(s1, (std::vector<std::string>{"recv F0", "F0", "B0", "send B0"}));
  p.pipelines[0][0].sendSeconds = -1;
  auto bad = analyze(p);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "pipeline 0 stage 0: forward, backward and send seconds must be "
            "finite and not negative");
}

// A tied gradient: three stages, one micro-batch, forward 1 s, backward
// 2 s; stage 2 sends 0.5 s to stage 0 after its backward (no neighbour
// transfers). F0 on stages 0-2 ends at 3, stage 2's B0 at 5, its send at
// 5.5; stage 1's B0 [5, 7] needs only the neighbour; stage 0 waits for
// both (7), receives [7, 7.5], B0 [7.5, 9.5]. Idle: stage 0 1 to 7 (6 s),
// stage 1 0 to 1, 2 to 5 and 7 to 9.5 (6.5 s), stage 2 0 to 2 and 5.5 to
// 9.5 (6 s).
TEST(Bubbles, BackwardSendsReachAStageThatIsNoNeighbour) {
  ScheduleProblem p = pipeline(false, {1, 1, 1}, {2, 2, 2}, 1);
  p.pipelines[0][2].backwardSends.push_back({0, 0.5});
  auto a = analyze(p);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  EXPECT_NEAR(a->stepSeconds, 9.5, 1e-12);
  EXPECT_NEAR(a->stages[0].idleSeconds, 6, 1e-12);
  EXPECT_NEAR(a->stages[1].idleSeconds, 6.5, 1e-12);
  EXPECT_NEAR(a->stages[2].idleSeconds, 6, 1e-12);
  EXPECT_EQ(a->stages[0].busy[1].what, "recv B0");
  EXPECT_NEAR(a->stages[0].busy[1].start, 7, 1e-12);
  p.pipelines[0][2].backwardSends[0].to = 2;
  auto bad = analyze(p);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "pipeline 0 stage 2: a backward send to stage 2 of 0.50 seconds "
            "names no other stage or is negative");
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
