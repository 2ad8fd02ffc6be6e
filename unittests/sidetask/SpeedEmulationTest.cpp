//===- SpeedEmulationTest.cpp - CPU ranks at a plan's predicted pace ------===//
//
// frenzy-launch --emulate-speed=plan|scale (runtime/dist/SpeedEmulation.h):
// which plans carry per-action predictions, the per-micro-batch time the
// scale is computed from, and ActionClock, which makes an action last its
// predicted seconds x the scale (its sleep, the waits inside its window,
// and the debt that later sleeps pay back).
//
//===----------------------------------------------------------------------===//
#include "SpeedEmulation.h"

#include <gtest/gtest.h>

#include <thread>

using namespace frenzy::rt;
namespace plan = frenzy::plan;

namespace {

/// A two-rank plan, one stage each, two micro-batches: F0 F1 B0 B1 (and a
/// send) per rank with the given forward/backward seconds (0: unset).
plan::Plan twoStages(double fwd, double bwd) {
  plan::Plan p;
  for (int r = 0; r < 2; ++r) {
    plan::Rank *rk = p.add_ranks();
    rk->set_id(r);
    rk->set_gpu_type("A100-80G");
    plan::StageProgram *sp = p.add_stages();
    sp->add_ranks(r);
    sp->set_micro_batches(2);
    sp->set_predicted_seconds(1.0 + r); // the partitioner's figure
    for (int k = 0; k < 2; ++k) {
      plan::Action *a = rk->add_stream();
      a->set_kind(plan::Action::FORWARD);
      a->set_predicted_seconds(fwd * (r + 1));
    }
    plan::Action *s = rk->add_stream();
    s->set_kind(plan::Action::SEND);
    s->set_predicted_seconds(0.5);
    for (int k = 0; k < 2; ++k) {
      plan::Action *a = rk->add_stream();
      a->set_kind(plan::Action::BACKWARD);
      a->set_predicted_seconds(bwd * (r + 1));
    }
  }
  return p;
}

plan::Action action(double seconds) {
  plan::Action a;
  a.set_kind(plan::Action::SEND);
  a.set_predicted_seconds(seconds);
  return a;
}

} // namespace

TEST(SpeedEmulation, PlanPredictsActionsOnlyWhenEveryComputeHasATime) {
  EXPECT_TRUE(predictsActions(twoStages(1e-3, 2e-3)));
  EXPECT_FALSE(predictsActions(twoStages(0, 2e-3)));
  plan::Plan p = twoStages(1e-3, 2e-3);
  p.mutable_ranks(1)->mutable_stream(4)->set_predicted_seconds(0);
  EXPECT_FALSE(predictsActions(p));
  EXPECT_FALSE(predictsActions(plan::Plan()));
}

TEST(SpeedEmulation, PerMicroBatchFromTheActionsElseTheStage) {
  // Per micro-batch: (2 forwards + 2 backwards) / 2; rank 1's are doubled.
  std::vector<double> pred = predictedPerMicroBatch(twoStages(1e-3, 2e-3));
  ASSERT_EQ(pred.size(), 2u);
  EXPECT_DOUBLE_EQ(pred[0], 3e-3);
  EXPECT_DOUBLE_EQ(pred[1], 6e-3);
  // Without action times: the stage's predicted seconds.
  pred = predictedPerMicroBatch(twoStages(0, 0));
  EXPECT_DOUBLE_EQ(pred[0], 1.0);
  EXPECT_DOUBLE_EQ(pred[1], 2.0);
}

TEST(SpeedEmulation, ActionClockOffDoesNotSleep) {
  ActionClock c;
  double t0 = steadySeconds();
  EXPECT_EQ(c.run(action(1.0), t0), 0.0); // scale 0: off
  c.scale = 100;
  EXPECT_FALSE(c.on(action(0)));
  EXPECT_EQ(c.run(action(0), t0), 0.0); // no prediction: off
  EXPECT_LT(steadySeconds() - t0, 0.05);
}

TEST(SpeedEmulation, ActionLastsItsPredictionTimesTheScale) {
  ActionClock c;
  c.scale = 20;
  double t0 = steadySeconds();
  double slept = c.run(action(1e-3), t0); // 20 ms
  double took = steadySeconds() - t0;
  EXPECT_GE(took, 0.020 - 1e-4);
  EXPECT_GT(slept, 0.015);
  // Waits inside the window lengthen it by as much.
  t0 = steadySeconds();
  c.debt = 0;
  c.run(action(1e-3), t0, 0.010);
  EXPECT_GE(steadySeconds() - t0, 0.030 - 1e-4);
}

TEST(SpeedEmulation, WorkAfterTheSleepIsPaidBackByTheNextAction) {
  ActionClock c;
  c.scale = 10;
  double t0 = steadySeconds();
  c.run(action(1e-3), t0);                                   // 10 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(8)); // "the send"
  c.settle(action(1e-3));
  EXPECT_GE(c.debt, 0.008 - 1e-4);
  // The next 10 ms action sleeps about 8 ms less: both end near 20 ms.
  double t1 = steadySeconds();
  c.run(action(1e-3), t1);
  double took = steadySeconds() - t1;
  EXPECT_LT(took, 0.008); // ~2 ms, with room for a late wake-up
  // Settling an action that was not emulated changes nothing.
  double d = c.debt;
  c.settle(action(0));
  EXPECT_EQ(c.debt, d);
}
