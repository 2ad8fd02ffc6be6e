//===- PartitionAttrs.cpp - the partition decision as IR attributes -------===//
//
// Converts between the planner's plain data (PartitionPlan, ScheduleOrders:
// lib/Planning stays free of MLIR) and the dialect's typed attributes
// (#frenzy.layout, #frenzy.schedule, #frenzy.placement). The attributes'
// verifiers check every field when they are built or parsed, so reading is
// accessor calls only; nothing here parses text.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace frenzy;

namespace {

bool owns(const Stage &st, int64_t block) {
  if (block == BlockAttr::kEmbed)
    return st.embed;
  if (block == BlockAttr::kHead)
    return st.head;
  return block >= st.firstLayer && block <= st.lastLayer;
}

/// The bounding grid of the plan's stages (LayoutAttr's verifier holds the
/// mesh to exactly this).
MeshAttr meshOf(MLIRContext *ctx, const PartitionPlan &pp) {
  int64_t depth = 0, width = 0;
  for (const Pipeline &p : pp.pipelines) {
    depth = std::max<int64_t>(depth, int64_t(p.stages.size()));
    for (const Stage &st : p.stages)
      width = std::max(width, st.tp());
  }
  Builder b(ctx);
  return MeshAttr::get(
      ctx, {b.getStringAttr("dp"), b.getStringAttr("pp"), b.getStringAttr("tp")},
      {int64_t(pp.pipelines.size()), depth, width});
}

std::vector<int64_t> toVector(ArrayRef<int64_t> a) { return {a.begin(), a.end()}; }

} // namespace

LogicalResult frenzy::recordPartition(ModuleOp module,
                                      const RecordedPartition &rec,
                                      const ClusterSpec *cluster) {
  MLIRContext *ctx = module.getContext();
  // Checked: a plan the verifiers refuse is the planner's bug, reported
  // here rather than written into a plan.
  auto err = [&] { return emitError(module.getLoc()); };
  const PartitionPlan &pp = rec.plan;
  SmallVector<PipelineAttr> pipelines;
  for (const Pipeline &p : pp.pipelines) {
    SmallVector<StageAttr> stages;
    for (const Stage &st : p.stages) {
      StringRef gpu;
      if (cluster && st.node >= 0 && size_t(st.node) < cluster->nodes.size())
        gpu = cluster->nodes[size_t(st.node)].gpu;
      // Exact parameter types: the generated builders, not the templates.
      int64_t layers[] = {st.firstLayer, st.lastLayer};
      stages.push_back(StageAttr::get(
          ctx, int64_t(st.node), ArrayRef<int64_t>(st.devices),
          ArrayRef<int64_t>(layers), st.embed, st.head, gpu, F64(st.seconds),
          F64(st.forwardSeconds), F64(st.transferSeconds), st.peakBytes,
          st.activationBytes, st.fullRecompute));
    }
    pipelines.push_back(PipelineAttr::get(
        ctx, p.microBatches, p.microBatches * pp.microBatch,
        F64(p.stageSeconds), ArrayRef<StageAttr>(stages)));
  }
  // Unused GPUs and why: the report explains every one.
  SmallVector<IdleAttr> idle;
  for (const IdleGpus &i : pp.idle)
    idle.push_back(IdleAttr::get(ctx, i.node, i.devices, i.why));
  const PartitionOptions &o = rec.options;
  auto layout = LayoutAttr::getChecked(
      err, ctx, meshOf(ctx, pp), StringRef(rec.clusterPath),
      StringRef(pp.description), o.globalBatch, pp.microBatch, o.seq,
      recomputeName(o.recompute), int64_t(o.fullRecompute), pp.fixedShares,
      pp.gpipe, pp.sequenceParallel, StringRef(pp.scheduleNote),
      F64(pp.pipelineSeconds),
      F64(pp.allReduceSeconds), F64(pp.optimizerSeconds),
      ArrayRef<PipelineAttr>(pipelines), ArrayRef<IdleAttr>(idle));
  if (!layout)
    return failure();
  module->setAttr(kLayoutAttrName, layout);

  // Per block, its stage and TP degree in every pipeline. Blocks are few
  // and attributes uniqued, so ops of one block share one placement.
  std::map<int64_t, PlacementAttr> byBlock;
  module.walk([&](Operation *op) {
    auto block = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName);
    if (!block)
      return;
    auto [it, fresh] = byBlock.try_emplace(block.getIndex());
    if (fresh) {
      SmallVector<int64_t> stage, tp;
      for (const Pipeline &p : pp.pipelines) {
        int64_t s = 0;
        while (s < int64_t(p.stages.size()) &&
               !owns(p.stages[s], block.getIndex()))
          ++s;
        bool found = s < int64_t(p.stages.size());
        stage.push_back(found ? s : -1);
        tp.push_back(found ? p.stages[s].tp() : 0);
      }
      it->second = PlacementAttr::get(ctx, stage, tp);
    }
    op->setAttr(kPlacementAttrName, it->second);
  });
  return success();
}

FailureOr<std::optional<RecordedPartition>>
frenzy::readPartition(ModuleOp module) {
  Attribute attr = module->getAttr(kLayoutAttrName);
  if (!attr)
    return std::optional<RecordedPartition>();
  auto layout = dyn_cast<LayoutAttr>(attr);
  if (!layout)
    return emitError(module.getLoc())
           << kLayoutAttrName << " is not a #frenzy.layout<...>";
  RecordedPartition rec;
  rec.clusterPath = layout.getCluster().str();
  PartitionOptions &o = rec.options;
  o.globalBatch = layout.getGlobalBatch();
  o.seq = layout.getSeq();
  // The verifier admits only the names parseRecompute knows.
  o.recompute = parseRecompute(layout.getRecompute()).value_or(o.recompute);
  o.fullRecompute = int(layout.getFullRecompute());
  PartitionPlan &pp = rec.plan;
  pp.microBatch = layout.getMicroBatch();
  pp.fixedShares = layout.getFixedShares();
  pp.pipelineSeconds = layout.getPipelineSeconds();
  pp.allReduceSeconds = layout.getAllReduceSeconds();
  pp.optimizerSeconds = layout.getOptimizerSeconds();
  pp.description = layout.getDescription().str();
  pp.gpipe = layout.getGpipe();
  pp.sequenceParallel = layout.getSequenceParallel();
  pp.scheduleNote = layout.getScheduleNote().str();
  for (PipelineAttr p : layout.getPipelines()) {
    Pipeline &pipe = pp.pipelines.emplace_back();
    pipe.microBatches = p.getMicroBatches();
    pipe.stageSeconds = p.getStageSeconds();
    for (StageAttr s : p.getStages()) {
      Stage &st = pipe.stages.emplace_back();
      st.node = int(s.getNode());
      st.devices = toVector(s.getDevices());
      st.firstLayer = s.getFirstLayer();
      st.lastLayer = s.getLastLayer();
      st.embed = s.getEmbed();
      st.head = s.getHead();
      st.seconds = s.getSeconds();
      st.forwardSeconds = s.getForwardSeconds();
      st.transferSeconds = s.getTransferSeconds();
      st.peakBytes = s.getPeakBytes();
      st.activationBytes = s.getActivationBytes();
      st.fullRecompute = s.getFullRecompute();
    }
  }
  for (IdleAttr i : layout.getIdle())
    pp.idle.push_back({int(i.getNode()), toVector(i.getDevices()),
                       i.getWhy().str()});
  return std::optional<RecordedPartition>(std::move(rec));
}

LogicalResult frenzy::recordSchedule(ModuleOp module,
                                     const ScheduleOrders &orders,
                                     const PartitionPlan &plan) {
  MLIRContext *ctx = module.getContext();
  auto err = [&] { return emitError(module.getLoc()); };
  SmallVector<PipelineOrderAttr> pipelines;
  for (auto [p, stages] : llvm::enumerate(orders.pipelines)) {
    SmallVector<StageOrderAttr> perStage;
    for (const std::vector<PhaseStep> &order : stages) {
      SmallVector<ScheduleAction> actions;
      for (const PhaseStep &st : order)
        actions.push_back({st.backward, st.microBatch});
      perStage.push_back(StageOrderAttr::get(ctx, actions));
    }
    int64_t microBatches =
        p < plan.pipelines.size() ? plan.pipelines[p].microBatches : 0;
    pipelines.push_back(PipelineOrderAttr::get(
        ctx, microBatches, ArrayRef<StageOrderAttr>(perStage)));
  }
  auto schedule =
      ScheduleAttr::getChecked(err, ctx, scheduleName(orders.kind),
                               ArrayRef<PipelineOrderAttr>(pipelines));
  if (!schedule)
    return failure();
  module->setAttr(kScheduleAttrName, schedule);
  return success();
}

FailureOr<ScheduleOrders> frenzy::readSchedule(ModuleOp module,
                                               const PartitionPlan &plan) {
  auto schedule = module->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  if (!schedule)
    return emitError(module.getLoc())
           << kScheduleAttrName
           << " is missing or not a #frenzy.schedule<...>: run "
              "frenzy-pipeline-schedule after frenzy-partition";
  // The IR verifier holds the schedule to the layout (LayoutVerifier.cpp);
  // this guards callers that built the module without verifying it.
  if (schedule.getPipelines().size() != plan.pipelines.size())
    return emitError(module.getLoc())
           << kScheduleAttrName << " has " << schedule.getPipelines().size()
           << " pipelines; " << kLayoutAttrName << " has "
           << plan.pipelines.size();
  ScheduleOrders out;
  // The verifier admits only "1f1b" and "gpipe".
  out.kind = parseScheduleName(schedule.getKind()).value_or(out.kind);
  for (auto [p, order] : llvm::enumerate(schedule.getPipelines())) {
    if (order.getStages().size() != plan.pipelines[p].stages.size())
      return emitError(module.getLoc())
             << kScheduleAttrName << ": pipeline " << p << " orders "
             << order.getStages().size() << " stages; the layout's has "
             << plan.pipelines[p].stages.size();
    auto &stages = out.pipelines.emplace_back();
    for (StageOrderAttr stage : order.getStages()) {
      std::vector<PhaseStep> &steps = stages.emplace_back();
      for (ScheduleAction a : stage.getActions())
        steps.push_back({a.backward, int32_t(a.microBatch)});
    }
  }
  return out;
}

void frenzy::recordAlternatives(ModuleOp module,
                                ArrayRef<Alternative> alternatives) {
  Builder b(module.getContext());
  SmallVector<Attribute> list;
  for (const Alternative &a : alternatives)
    list.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("description", b.getStringAttr(a.description)),
         b.getNamedAttr("step_seconds", b.getF64FloatAttr(a.stepSeconds)),
         b.getNamedAttr("why", b.getStringAttr(a.why))}));
  module->setAttr(kAlternativesAttrName, b.getArrayAttr(list));
}

std::vector<Alternative> frenzy::readAlternatives(ModuleOp module) {
  std::vector<Alternative> out;
  auto list = module->getAttrOfType<ArrayAttr>(kAlternativesAttrName);
  for (Attribute a : list ? list.getValue() : ArrayRef<Attribute>()) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      continue;
    Alternative alt;
    if (auto s = d.getAs<StringAttr>("description"))
      alt.description = s.str();
    if (auto f = d.getAs<FloatAttr>("step_seconds"))
      alt.stepSeconds = f.getValueAsDouble();
    if (auto s = d.getAs<StringAttr>("why"))
      alt.why = s.str();
    out.push_back(std::move(alt));
  }
  return out;
}
