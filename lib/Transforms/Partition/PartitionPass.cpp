//===- PartitionPass.cpp - the frenzy-partition pass ----------------------===//
//
// The pass is a thin shell: it reads the cluster, extracts the plain-data
// profiles the partitioner needs (cost and memory models, built once from
// the IR), calls the MLIR-free partitioner library, and records what it
// decided in the IR. The search itself lives in lib/Planning so the job
// scheduler and re-planning can call it without MLIR.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Dialect/Frenzy/Transforms/TensorParallel.h"
#include "frenzy/Planning/LayoutSpec.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYPARTITION
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {
struct FrenzyPartitionPass
    : frenzy::impl::FrenzyPartitionBase<FrenzyPartitionPass> {
  using FrenzyPartitionBase::FrenzyPartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(run(module)))
      signalPassFailure();
  }

  LogicalResult run(ModuleOp module) {
    if (cluster.empty())
      return emitError(module.getLoc(),
                       "frenzy-partition needs cluster=FILE (the "
                       "cluster YAML)");
    auto spec = readClusterFile(cluster);
    if (!spec)
      return emitError(module.getLoc(), llvm::toString(spec.takeError()));
    RecordedPartition rec;
    rec.clusterPath = cluster;
    PartitionOptions &po = rec.options;
    if (globalBatch <= 0)
      return emitError(module.getLoc(),
                       "frenzy-partition: global-batch must be "
                       "positive, got ")
             << globalBatch;
    po.globalBatch = globalBatch;
    auto moduleSeq = module->getAttrOfType<IntegerAttr>("frenzy.seq");
    po.seq = seq > 0 ? int64_t(seq) : moduleSeq ? moduleSeq.getInt() : 1024;
    if (!setRecompute(po, recompute))
      return emitError(module.getLoc(), "unknown --recompute '")
             << recompute << "'; valid values: auto, none, selective, full";
    po.gpipe = schedule == "gpipe";
    if (sequenceParallel != "off" && sequenceParallel != "on" &&
        sequenceParallel != "auto")
      return emitError(module.getLoc(), "unknown sequence-parallel '")
             << sequenceParallel << "'; valid values: off, on, auto";
    po.sequenceParallel = sequenceParallel == "on";
    po.sequenceParallelAuto = sequenceParallel == "auto";
    po.tpRefused = readTpRefusals(module);

    auto memory = MemoryModel::build(module, std::nullopt);
    if (failed(memory))
      return failure();
    auto cost = CostModel::build(module, memory->precision());
    if (failed(cost))
      return failure();
    std::vector<Alternative> alternatives;
    auto plan = [&]() -> llvm::Expected<PartitionPlan> {
      if (layout.empty())
        return partition(*cost, *memory, *spec, po,
                         explain ? &alternatives : nullptr);
      auto pinned =
          parseLayout(layout, *spec, cost->numLayers(), po.globalBatch);
      if (!pinned)
        return pinned.takeError();
      return evaluatePlan(*cost, *memory, *spec, po, *pinned);
    }();
    if (!plan)
      return emitError(module.getLoc())
             << cluster << ": " << llvm::toString(plan.takeError());
    rec.plan = std::move(*plan);
    if (!rec.plan.scheduleNote.empty())
      emitWarning(module.getLoc())
          << rec.plan.scheduleNote << "; using 1f1b";
    if (failed(recordPartition(module, rec, &*spec)))
      return failure();
    if (explain)
      recordAlternatives(module, alternatives);
    return success();
  }
};
} // namespace
