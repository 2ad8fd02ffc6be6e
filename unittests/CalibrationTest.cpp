//===- CalibrationTest.cpp - device profiles and the predicted timeline ---===//
#include "frenzy/Cluster/DeviceProfile.h"
#include "frenzy/Cluster/GpuCatalogue.h"
#include "frenzy/Planning/TimelineSimulation.h"

#include "ProfileTestText.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>

using namespace frenzy;

namespace {

TEST(DeviceProfile, InterpolatesRatesLogLinearlyInSize) {
  std::string path = writeTemp(kProfile);
  auto p = readDeviceProfile(path, "CPU");
  std::remove(path.c_str());
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->cores, 2);
  // At a measured size: that rate (plus the 1 us overhead).
  EXPECT_NEAR(p->kernelSeconds(KernelKind::Contraction, 1e6, 0), 1e-6 + 1e-4,
              1e-12);
  // Half-way in log size: the mean rate, 20 GFLOPS.
  EXPECT_NEAR(p->kernelSeconds(KernelKind::Contraction, 1e7, 0),
              1e-6 + 1e7 / 20e9, 1e-12);
  // Beyond the range: the nearest point's rate.
  EXPECT_NEAR(p->kernelSeconds(KernelKind::Contraction, 1e9, 0),
              1e-6 + 1e9 / 30e9, 1e-12);
  // Memory-bound kernels: their own rate when measured, else the table's.
  EXPECT_NEAR(p->kernelSeconds("gelu", KernelKind::MemoryBound, 0, 1e4),
              1e-6 + 1e4 / 2e9, 1e-12);
  EXPECT_NEAR(p->kernelSeconds("add", KernelKind::MemoryBound, 0, 1e3),
              1e-6 + 1e3 / 40e9, 1e-12);
  ASSERT_NE(p->link("pcie"), nullptr); // falls back to shm
  EXPECT_NEAR(p->link("pcie")->bandwidth, 1e9, 1);
}

TEST(DeviceProfile, RefusesAnotherTypesProfile) {
  std::string path = writeTemp(kProfile);
  auto p = readDeviceProfile(path, "A100-80G");
  std::remove(path.c_str());
  ASSERT_FALSE(bool(p));
  EXPECT_NE(llvm::toString(p.takeError())
                .find("measured for GPU type 'cpu', not 'A100-80G'"),
            std::string::npos);
}

TEST(DeviceProfile, DatasheetDefaults) {
  const GpuType *a100 = findGpuType("A100-80G");
  ASSERT_NE(a100, nullptr);
  DeviceProfile p = DeviceProfile::fromDatasheet(*a100);
  EXPECT_FALSE(p.calibrated);
  EXPECT_NEAR(p.kernelSeconds(KernelKind::Contraction, 312e12 * 0.6, 0), 1.0,
              1e-9);
  EXPECT_NEAR(p.kernelSeconds(KernelKind::MemoryBound, 0, 2039e9 * 0.7), 1.0,
              1e-9);
}

/// Two ranks, one stage each: rank 1 receives what rank 0's forward made.
plan::Plan twoStagePlan() {
  plan::Plan p;
  plan::Program *prog = p.mutable_program();
  for (int t = 0; t < 3; ++t) {
    plan::Tensor *x = prog->add_tensors();
    x->set_id(t);
    x->add_shape(1000); // 4000 bytes
  }
  for (int i = 0; i < 2; ++i) {
    plan::Instr *in = prog->add_instrs();
    in->set_op("gelu");
    in->add_inputs(i);
    in->add_outputs(i + 1);
    in->set_bytes(1e4); // 1 us + 5 us at 2 GB/s
  }
  for (int s = 0; s < 2; ++s) {
    plan::StageProgram *sp = p.add_stages();
    sp->set_stage(s);
    sp->add_ranks(s);
    sp->add_forward_instrs(s);
    plan::Rank *r = p.add_ranks();
    r->set_id(s);
    r->set_node("localhost");
    r->set_gpu_type("cpu");
    r->set_stage(s);
    auto add = [&](plan::Action::Kind k) {
      plan::Action *a = r->add_stream();
      a->set_kind(k);
      a->set_tensor(1);
      a->set_peer(1 - s);
      return a;
    };
    if (s == 1)
      add(plan::Action::RECV);
    add(plan::Action::FORWARD);
    if (s == 0)
      add(plan::Action::SEND);
  }
  return p;
}

TEST(TimelineSimulation, ReceiverBehindItsSenderNeverWaits) {
  std::string path = writeTemp(kProfile);
  ClusterSpec cluster;
  cluster.nodes.push_back({"localhost", "cpu", 2});
  GpuType cpu = *findGpuType("cpu");
  auto p = readDeviceProfile(path, "cpu");
  std::remove(path.c_str());
  ASSERT_TRUE(bool(p));
  cpu.profile = std::make_shared<DeviceProfile>(*p);
  cluster.gpuTypes.push_back(cpu);
  PredictedTimeline t = simulateTimeline(twoStagePlan(), cluster);
  ASSERT_EQ(t.rankSeconds.size(), 2u);
  double forward = 6e-6;
  double send = 4000 / 10e9 + 2e-6;           // copy + latency
  double recv = 2e-6 + 4000 / 1e9;            // latency + bytes / bandwidth
  // The steady state (steps overlap; this plan has no update to hold the
  // ranks together): rank 0 runs ahead, so rank 1's message is always
  // there and its step is its receive and forward, with no wait.
  EXPECT_NEAR(t.rankSeconds[0], forward + send, 1e-12);
  EXPECT_NEAR(t.rankSeconds[1], recv + forward, 1e-12);
  EXPECT_NEAR(t.stepSeconds, t.rankSeconds[1], 1e-15);
  for (const plan::TraceEvent &e : t.events)
    EXPECT_NE(e.cat, "wait") << e.name;
}

} // namespace
