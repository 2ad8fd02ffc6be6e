//===- PartitionAttrsTest.cpp - the partition as IR attributes ------------===//
//
// What frenzy-partition records (#frenzy.layout, #frenzy.schedule,
// #frenzy.placement) must read back exactly (the plan writer trusts it),
// survive printing and parsing bit for bit, stamp every block op with its
// placement per pipeline, and a plan the attributes' verifiers refuse must
// fail with their diagnostic instead of reaching the writer.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/InitAll.h"
#include "frenzy/Target/Plan/PlanWriter.h"
#include "plan.pb.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace frenzy;

namespace {

const char *kModule = R"mlir(
module {
  func.func @forward(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "frenzy.add"(%a, %a) {frenzy.block = #frenzy.block<embed>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %1 = "frenzy.add"(%0, %0) {frenzy.block = #frenzy.block<0>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %2 = "frenzy.add"(%1, %1) {frenzy.block = #frenzy.block<1>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %3 = "frenzy.add"(%2, %2) {frenzy.block = #frenzy.block<head>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %3 : tensor<2xf32>
  }
}
)mlir";

/// Two pipelines: (embed + layer 0 on one GPU, layer 1 + head on two) and
/// everything on one GPU; one GPU idle.
RecordedPartition samplePartition() {
  RecordedPartition rec;
  rec.clusterPath = "c.yaml";
  rec.options.globalBatch = 12;
  rec.options.seq = 256;
  rec.options.recompute = Recompute::Full;
  PartitionPlan &pp = rec.plan;
  pp.microBatch = 2;
  pp.pipelineSeconds = 0.1;
  pp.allReduceSeconds = 1.0 / 3;
  pp.optimizerSeconds = 2e-5;
  pp.description = "test \"quoted\"";
  pp.scheduleNote = "gpipe does not fit";
  rec.options.fullRecompute = 1;
  Pipeline a;
  a.microBatches = 4;
  a.stageSeconds = 0.0125;
  Stage s0;
  s0.devices = {0};
  s0.firstLayer = s0.lastLayer = 0;
  s0.embed = true;
  s0.seconds = 0.01;
  s0.forwardSeconds = 0.01 / 3; // not a short decimal: must read back exactly
  s0.transferSeconds = 1e-7;
  s0.peakBytes = 1 << 20;
  s0.activationBytes = 4096;
  s0.fullRecompute = true;
  Stage s1;
  s1.devices = {1, 2};
  s1.firstLayer = s1.lastLayer = 1;
  s1.head = true;
  s1.seconds = 0.0125;
  a.stages = {s0, s1};
  Pipeline b;
  b.microBatches = 2;
  Stage whole;
  whole.node = 1;
  whole.devices = {0};
  whole.firstLayer = 0;
  whole.lastLayer = 1;
  whole.embed = whole.head = true;
  b.stages = {whole};
  pp.pipelines = {a, b};
  pp.idle = {{1, {1}, "slower than it saves"}};
  return rec;
}

class PartitionAttrsTest : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    registerAllDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kModule, ctx.get());
    ASSERT_TRUE(module);
  }

  /// The first error a call emits.
  template <typename F> std::string firstError(F &&f) {
    std::string msg;
    ScopedDiagnosticHandler h(ctx.get(), [&](Diagnostic &d) {
      if (msg.empty())
        msg = d.str();
      return success();
    });
    f();
    return msg;
  }

  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
};

void expectSame(const RecordedPartition &x, const RecordedPartition &y) {
  EXPECT_EQ(x.clusterPath, y.clusterPath);
  EXPECT_EQ(x.options.globalBatch, y.options.globalBatch);
  EXPECT_EQ(x.options.seq, y.options.seq);
  EXPECT_EQ(x.options.recompute, y.options.recompute);
  EXPECT_EQ(x.plan.microBatch, y.plan.microBatch);
  EXPECT_EQ(x.plan.stepSeconds(), y.plan.stepSeconds());
  EXPECT_EQ(x.plan.allReduceSeconds, y.plan.allReduceSeconds);
  EXPECT_EQ(x.plan.gpipe, y.plan.gpipe);
  EXPECT_EQ(x.plan.scheduleNote, y.plan.scheduleNote);
  EXPECT_EQ(x.options.fullRecompute, y.options.fullRecompute);
  EXPECT_EQ(x.plan.description, y.plan.description);
  ASSERT_EQ(x.plan.pipelines.size(), y.plan.pipelines.size());
  for (size_t p = 0; p < x.plan.pipelines.size(); ++p) {
    const Pipeline &a = x.plan.pipelines[p], &b = y.plan.pipelines[p];
    EXPECT_EQ(a.microBatches, b.microBatches);
    EXPECT_EQ(a.stageSeconds, b.stageSeconds);
    ASSERT_EQ(a.stages.size(), b.stages.size());
    for (size_t s = 0; s < a.stages.size(); ++s) {
      const Stage &u = a.stages[s], &v = b.stages[s];
      EXPECT_EQ(u.node, v.node);
      EXPECT_EQ(u.devices, v.devices);
      EXPECT_EQ(u.firstLayer, v.firstLayer);
      EXPECT_EQ(u.lastLayer, v.lastLayer);
      EXPECT_EQ(u.embed, v.embed);
      EXPECT_EQ(u.head, v.head);
      EXPECT_EQ(u.seconds, v.seconds);
      EXPECT_EQ(u.forwardSeconds, v.forwardSeconds);
      EXPECT_EQ(u.transferSeconds, v.transferSeconds);
      EXPECT_EQ(u.peakBytes, v.peakBytes);
      EXPECT_EQ(u.activationBytes, v.activationBytes);
      EXPECT_EQ(u.fullRecompute, v.fullRecompute);
    }
  }
  ASSERT_EQ(x.plan.idle.size(), y.plan.idle.size());
  EXPECT_EQ(x.plan.idle[0].devices, y.plan.idle[0].devices);
  EXPECT_EQ(x.plan.idle[0].why, y.plan.idle[0].why);
}

TEST_F(PartitionAttrsTest, RoundTripsThroughPrintedIR) {
  RecordedPartition rec = samplePartition();
  ASSERT_TRUE(succeeded(recordPartition(*module, rec)));
  ScheduleOrders orders = scheduleOrders(rec.plan, PipelineSchedule::OneFOneB);
  ASSERT_TRUE(succeeded(recordSchedule(*module, orders, rec.plan)));
  ASSERT_TRUE(succeeded(verify(*module)));

  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(text, ctx.get());
  ASSERT_TRUE(again);
  // Parsed attributes are the recorded ones (uniqued: the same pointers).
  EXPECT_EQ((*again)->getAttr(kLayoutAttrName),
            (*module)->getAttr(kLayoutAttrName));
  EXPECT_EQ((*again)->getAttr(kScheduleAttrName),
            (*module)->getAttr(kScheduleAttrName));
  auto back = readPartition(*again);
  ASSERT_TRUE(succeeded(back));
  ASSERT_TRUE(back->has_value());
  expectSame(rec, **back);
  auto sched = readSchedule(*again, (*back)->plan);
  ASSERT_TRUE(succeeded(sched));
  EXPECT_EQ(sched->kind, PipelineSchedule::OneFOneB);
  EXPECT_EQ(sched->pipelines, orders.pipelines);
}

TEST_F(PartitionAttrsTest, StampsEveryBlockOpPerPipeline) {
  ASSERT_TRUE(succeeded(recordPartition(*module, samplePartition())));
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>> seen;
  module->walk([&](Operation *op) {
    auto b = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName);
    if (!b)
      return;
    auto placement = op->getAttrOfType<PlacementAttr>(kPlacementAttrName);
    ASSERT_TRUE(placement);
    seen[b.getIndex()] = {std::vector<int64_t>(placement.on("pp")),
                          std::vector<int64_t>(placement.on("tp"))};
  });
  using V = std::vector<int64_t>;
  EXPECT_EQ(seen[BlockAttr::kEmbed], std::make_pair(V{0, 0}, V{1, 1}));
  EXPECT_EQ(seen[0], std::make_pair(V{0, 0}, V{1, 1}));
  EXPECT_EQ(seen[1], std::make_pair(V{1, 0}, V{2, 1}));
  EXPECT_EQ(seen[BlockAttr::kHead], std::make_pair(V{1, 0}, V{2, 1}));
}

TEST_F(PartitionAttrsTest, NoRecordIsNotAnError) {
  auto none = readPartition(*module);
  ASSERT_TRUE(succeeded(none));
  EXPECT_FALSE(none->has_value());
}

TEST_F(PartitionAttrsTest, PlanTheVerifierRefusesIsNotRecorded) {
  RecordedPartition rec = samplePartition();
  rec.plan.pipelines[1].stages[0].node = 0; // node 0 device 0 twice
  std::string err = firstError(
      [&] { EXPECT_TRUE(failed(recordPartition(*module, rec))); });
  EXPECT_EQ(err, "layout: node 0 device 0 is placed twice "
                 "(pipelines[0].stages[0] and pipelines[1].stages[0])");
  EXPECT_FALSE((*module)->hasAttr(kLayoutAttrName));

  rec = samplePartition();
  rec.plan.pipelines[0].stages[0].forwardSeconds = 1.0; // > seconds
  err = firstError(
      [&] { EXPECT_TRUE(failed(recordPartition(*module, rec))); });
  EXPECT_EQ(err, "layout: pipelines[0].stages[0]: forward_seconds = 1 must be "
                 "between 0 and seconds (0.01)");
}

TEST_F(PartitionAttrsTest, ScheduleMustRunEachMicroBatchOnceInOrder) {
  RecordedPartition rec = samplePartition();
  ASSERT_TRUE(succeeded(recordPartition(*module, rec)));
  ScheduleOrders orders = scheduleOrders(rec.plan, PipelineSchedule::GPipe);
  orders.pipelines[1][0] = {{true, 0}, {false, 0}, {false, 1}, {true, 1}};
  std::string err = firstError([&] {
    EXPECT_TRUE(failed(recordSchedule(*module, orders, rec.plan)));
  });
  EXPECT_EQ(err, "schedule: pipelines[1]: stage 0: B0 repeats, or is a "
                 "backward before its forward");

  orders.pipelines[1][0] = {{false, 0}, {true, 0}};
  err = firstError([&] {
    EXPECT_TRUE(failed(recordSchedule(*module, orders, rec.plan)));
  });
  EXPECT_EQ(err, "schedule: pipelines[1]: stage 0 must run each of the 2 "
                 "micro-batches forward and backward once");

  orders.pipelines[1][0] = {{false, 0}, {true, 0}, {false, 2}, {true, 2}};
  err = firstError([&] {
    EXPECT_TRUE(failed(recordSchedule(*module, orders, rec.plan)));
  });
  EXPECT_EQ(err, "schedule: pipelines[1]: stage 0 runs F2, but the pipeline "
                 "has 2 micro-batches (0..1)");

  // One pipeline short: recorded (each order is sound) but refused by the
  // reader and by the IR verifier, which hold it to the layout.
  orders = scheduleOrders(rec.plan, PipelineSchedule::GPipe);
  orders.pipelines.pop_back();
  ASSERT_TRUE(succeeded(recordSchedule(*module, orders, rec.plan)));
  err = firstError(
      [&] { EXPECT_TRUE(failed(readSchedule(*module, rec.plan))); });
  EXPECT_EQ(err, "frenzy.schedule has 1 pipelines; frenzy.layout has 2");
  err = firstError([&] { EXPECT_TRUE(failed(verify(*module))); });
  EXPECT_EQ(err, "frenzy.schedule has 1 pipelines; the layout has 2");
}

ClusterNode cpuNode(std::string name, int64_t count) {
  ClusterNode n;
  n.name = std::move(name);
  n.gpu = "cpu";
  n.count = count;
  return n;
}

TEST_F(PartitionAttrsTest, WriterTranslatesTheRecordOrRefusesIt) {
  RecordedPartition rec = samplePartition();
  ASSERT_TRUE(succeeded(recordPartition(*module, rec)));
  ASSERT_TRUE(succeeded(recordSchedule(
      *module, scheduleOrders(rec.plan, PipelineSchedule::GPipe), rec.plan)));
  // The writer hashes the model file; any file will do.
  SmallString<128> model;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("model", "onnx", model));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(model, ec);
    os << "not a model";
  }

  // Node 0 has two devices: the record's device 2 is not there.
  ClusterSpec small;
  small.nodes = {cpuNode("a", 2), cpuNode("b", 1)};
  plan::Plan out;
  std::string err = firstError([&] {
    EXPECT_TRUE(failed(buildPlan(*module, {}, model, "c.yaml", small, out)));
  });
  EXPECT_EQ(err, "frenzy.layout: pipelines[0].stages[1]: device 2 is not "
                 "on node 'a' (2 GPUs); partition again with this cluster");

  // A cluster that holds it: ranks and stages as recorded, streams in the
  // recorded (GPipe) order.
  ClusterSpec fits;
  fits.nodes = {cpuNode("a", 3), cpuNode("b", 1)};
  plan::Plan plan;
  ASSERT_TRUE(succeeded(buildPlan(*module, {}, model, "c.yaml", fits, plan)));
  EXPECT_EQ(plan.ranks_size(), 4);
  EXPECT_EQ(plan.stages_size(), 3);
  EXPECT_EQ(plan.micro_batch(), 2);
  EXPECT_EQ(plan.ranks(3).node(), "b");
  std::string kinds;
  for (const plan::Action &a : plan.ranks(0).stream())
    if (a.kind() == plan::Action::FORWARD || a.kind() == plan::Action::BACKWARD)
      kinds += a.kind() == plan::Action::FORWARD ? 'F' : 'B';
  EXPECT_EQ(kinds, "FFFFBBBB");
  EXPECT_EQ(plan.ranks(0).schedule(), "gpipe");
  llvm::sys::fs::remove(model);
}

} // namespace
