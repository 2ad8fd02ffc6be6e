//===- CoreSharingTest.cpp - ranks that share cores, in the cost model ----===//
//
// The measured quantities a profile carries for CPU ranks that share cores
// (the all-reduce's turns per member, kernels slowed by the other ranks)
// and the timeline's rule for such ranks (bound round-robin; a waiting rank
// gives its core up; a runnable one queues for it and keeps it until it
// waits again; groups on one node sum through shared memory, as
// frenzy-launch's core turns do), on a plan small enough to play by hand.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Cluster/DeviceProfile.h"
#include "frenzy/Cluster/GpuCatalogue.h"
#include "frenzy/Planning/TimelineSimulation.h"

#include "ProfileTestText.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace frenzy;

namespace {

const char *kShared = R"(shared_allreduce: { round_us: 1, bandwidth_gbs: 1 }
contention:
  - { ranks_per_core: 1, slowdown: 1.1 }
  - { ranks_per_core: 2, slowdown: 1.5 }
)";

llvm::Expected<DeviceProfile> read(const std::string &text) {
  std::string path = writeTemp(text);
  auto p = readDeviceProfile(path, "cpu");
  std::remove(path.c_str());
  return p;
}

TEST(CoreSharing, SharedAllReduceIsRoundsPlusBytesPerMember) {
  auto p = read(std::string(kProfile) + kShared);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  // 6 ranks: recursive doubling over 4 (2 rounds) and 2 to fold in and
  // hand back; each member moves 2 (n-1)/n of the buffer.
  EXPECT_NEAR(p->sharedAllReduceSeconds(6e3, 6), 4e-6 + 2.0 * 5 / 6 * 6e-6,
              1e-15);
  EXPECT_NEAR(p->sharedAllReduceSeconds(0, 4), 2e-6, 1e-15);
  EXPECT_NEAR(p->sharedAllReduceSeconds(0, 3), 3e-6, 1e-15);
  EXPECT_EQ(p->sharedAllReduceSeconds(100, 1), 0);
  // Ranks per core: ceil(ranks / cores); beyond the measured, the largest.
  EXPECT_EQ(p->contentionSlowdown(1), 1.0);
  EXPECT_NEAR(p->contentionSlowdown(2), 1.1, 1e-12);
  EXPECT_NEAR(p->contentionSlowdown(3), 1.5, 1e-12);
  EXPECT_NEAR(p->contentionSlowdown(9), 1.5, 1e-12);
  // A profile without them (an older frenzy-calibrate) measures neither.
  auto old = read(kProfile);
  ASSERT_TRUE(bool(old));
  EXPECT_LT(old->sharedAllReduceSeconds(1e3, 4), 0);
  EXPECT_EQ(old->contentionSlowdown(6), 1.0);
}

TEST(CoreSharing, ColdTurnIsInterpolatedAndScaled) {
  auto p = read(std::string(kProfile) + R"(cold_turn:
  state_bytes: 1000
  points:
    - { evicted_bytes: 3e6, extra_us: 30 }
    - { evicted_bytes: 1e6, extra_us: 10 }
)");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  // Linear from nothing evicted, between points (sorted on load), the last
  // point beyond; scaled by the rank's parameter bytes over the reference.
  EXPECT_NEAR(p->coldTurnSeconds(0.5e6, 1000), 5e-6, 1e-15);
  EXPECT_NEAR(p->coldTurnSeconds(2e6, 1000), 20e-6, 1e-15);
  EXPECT_NEAR(p->coldTurnSeconds(9e6, 1000), 30e-6, 1e-15);
  EXPECT_NEAR(p->coldTurnSeconds(2e6, 2500), 50e-6, 1e-15);
  EXPECT_EQ(p->coldTurnSeconds(0, 1000), 0);
  auto old = read(kProfile);
  ASSERT_TRUE(bool(old));
  EXPECT_EQ(old->coldTurnSeconds(2e6, 1000), 0);
  auto bad = read(std::string(kProfile) +
                  "cold_turn:\n  state_bytes: 0\n  points:\n"
                  "    - { evicted_bytes: 1e6, extra_us: 1 }\n");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("state_bytes must be positive"),
            std::string::npos);
}

TEST(CoreSharing, MalformedEntriesAreRefused) {
  auto p = read(std::string(kProfile) +
                "contention:\n  - { ranks_per_core: 0, slowdown: 1 }\n");
  ASSERT_FALSE(bool(p));
  EXPECT_NE(llvm::toString(p.takeError()).find("ranks_per_core must be >= 1"),
            std::string::npos);
  auto q = read(std::string(kProfile) +
                "shared_allreduce: { round_us: 1, bandwidth_gbs: 0 }\n");
  ASSERT_FALSE(bool(q));
  EXPECT_NE(llvm::toString(q.takeError()).find("bandwidth_gbs positive"),
            std::string::npos);
}

/// Three one-stage ranks (one forward kernel each, then the update's norm
/// all-reduce among all), on a node of two cores.
plan::Plan threeRanks() {
  plan::Plan p;
  plan::Program *prog = p.mutable_program();
  for (int t = 0; t < 2; ++t) {
    plan::Tensor *x = prog->add_tensors();
    x->set_id(t);
    x->add_shape(1000);
  }
  plan::Instr *in = prog->add_instrs();
  in->set_op("gelu");
  in->add_inputs(0);
  in->add_outputs(1);
  in->set_bytes(1e4); // 1 us + 1e4 B at 2 GB/s = 6 us
  for (int s = 0; s < 3; ++s) {
    plan::StageProgram *sp = p.add_stages();
    sp->set_pipeline(s);
    sp->add_ranks(s);
    sp->add_forward_instrs(0);
    plan::Rank *r = p.add_ranks();
    r->set_id(s);
    r->set_node("localhost");
    r->set_gpu_type("cpu");
    r->set_pipeline(s);
    r->add_stream()->set_kind(plan::Action::FORWARD);
    r->add_stream()->set_kind(plan::Action::UPDATE);
  }
  return p;
}

PredictedTimeline play(const std::string &profile, int ranks) {
  auto p = read(profile);
  EXPECT_TRUE(bool(p));
  ClusterSpec cluster;
  cluster.nodes.push_back({"localhost", "cpu", ranks});
  GpuType cpu = *findGpuType("cpu");
  cpu.profile = std::make_shared<DeviceProfile>(*p);
  cluster.gpuTypes.push_back(cpu);
  return simulateTimeline(threeRanks(), cluster);
}

TEST(CoreSharing, RanksOfACoreTakeTurns) {
  // Ranks 0 and 2 share core 0, rank 1 has core 1. Ranks that take turns
  // sum a group on one node through shared memory (NodeAllReduce): the
  // last to arrive sums the three members' 40 bytes, each member copies
  // the sum out with its core, both reading what other processes wrote:
  // at the memory rate out of the caches (the profile's largest buffer,
  // 4 GB/s). Per step core 0 runs two forwards (6 us each), the sum and
  // two copies out, and it is never idle: while one of its ranks waits
  // for the others, the other runs. Its work is the step.
  PredictedTimeline t = play(std::string(kProfile) + kShared, 3);
  double out = 2 * 40 / 4e9;
  double sum = (3 + 1) * 40 / 4e9;
  double forward = 6e-6 * 1.5; // 2 ranks per core: slowed by 1.5
  ASSERT_EQ(t.rankSeconds.size(), 3u);
  for (double s : t.rankSeconds)
    EXPECT_NEAR(s, 2 * forward + sum + 2 * out, 1e-12);
  // Rank 2 arrives last: it sums, then queues for its core with the
  // others (all leave when the sum is done; ties go to the lower rank), so
  // inside its all-reduce (not a wait: it arrived last) are the sum, rank
  // 0's copy out and next forward (a rank keeps its core until it waits),
  // then its own copy out.
  double longest = 0;
  for (const plan::TraceEvent &e : t.events)
    if (e.name == "norm all-reduce" && e.pid != 1)
      longest = std::max(longest, e.durUs * 1e-6);
  EXPECT_NEAR(longest, sum + out + forward + out, 1e-12);
}

TEST(CoreSharing, AWaitOnAnIdleCoreWakesSlowly) {
  // Rank 1 has core 1 to itself and sleeps in the norm's shared-memory sum
  // (the runtime's other waits on such a core spin): its copy out starts
  // at least idle_wake later.
  auto norm1 = [](const PredictedTimeline &t) {
    double d = 0;
    for (const plan::TraceEvent &e : t.events)
      if (e.name == "norm all-reduce" && e.pid == 1)
        d = std::max(d, e.durUs * 1e-6);
    return d;
  };
  PredictedTimeline fast = play(std::string(kProfile) + kShared, 3);
  PredictedTimeline slow =
      play(std::string(kProfile) + kShared + "idle_wake_us: 10\n", 3);
  // (Its later wake can make it the sum's last arrival instead of rank 2,
  // which shifts the whole pattern: the step only grows.)
  EXPECT_GE(norm1(slow) - norm1(fast), 10e-6 - 1e-12);
  EXPECT_GE(slow.stepSeconds, fast.stepSeconds - 1e-12);
  EXPECT_FALSE(bool(read(std::string(kProfile) + "idle_wake_us: -1\n")));
}

TEST(CoreSharing, ACoreEachNeedsNoTurns) {
  // The same plan where the profile counts 3 cores: each rank has one, the
  // step is one forward and the all-reduce at the link's figures.
  std::string profile = std::string(kProfile) + kShared;
  profile.replace(profile.find("cores: 2"), 8, "cores: 3");
  PredictedTimeline t = play(profile, 3);
  double forward = 6e-6 * 1.1; // 1 rank per core
  double norm = 3e-6 * std::log2(3.0); // link latency x log2(ranks)
  for (double s : t.rankSeconds)
    EXPECT_NEAR(s, forward + norm, 1e-12);
}

} // namespace
