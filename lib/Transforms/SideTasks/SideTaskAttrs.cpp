//===- SideTaskAttrs.cpp - bubbles and side-task slots in the IR ----------===//
//
// Builds the bubble analysis' problem from the recorded partition and
// schedule, and writes and reads back frenzy.side_tasks. Reading checks
// every field (the IR may be written by hand) so the plan writer never
// meets a slot it cannot place.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/SideTaskAttrs.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <map>

using namespace mlir;
using namespace frenzy;

FailureOr<ClusterSpec> frenzy::clusterOfPartition(ModuleOp module,
                                                  const RecordedPartition &rec,
                                                  StringRef override) {
  std::string path = override.empty() ? rec.clusterPath : override.str();
  auto spec = readClusterFile(path);
  if (!spec)
    return emitError(module.getLoc())
           << llvm::toString(spec.takeError())
           << " (the cluster of the recorded partition; give cluster=FILE "
              "to use another path)";
  return std::move(*spec);
}

bubbles::ScheduleProblem frenzy::scheduleProblem(const RecordedPartition &rec,
                                                 const ScheduleOrders &orders,
                                                 const ClusterSpec &cluster) {
  const PartitionPlan &pp = rec.plan;
  bubbles::ScheduleProblem out;
  out.kind = scheduleName(orders.kind).str();
  out.allReduceSeconds = pp.allReduceSeconds;
  out.optimizerSeconds = pp.optimizerSeconds;
  for (size_t p = 0; p < pp.pipelines.size(); ++p) {
    const Pipeline &pipe = pp.pipelines[p];
    auto &stages = out.pipelines.emplace_back();
    int64_t S = int64_t(pipe.stages.size());
    for (int64_t s = 0; s < S; ++s) {
      const Stage &st = pipe.stages[size_t(s)];
      bubbles::Stage b;
      if (st.node >= 0 && size_t(st.node) < cluster.nodes.size()) {
        b.gpu = cluster.nodes[size_t(st.node)].gpu;
        if (const GpuType *g = cluster.gpuType(b.gpu))
          b.capacityBytes = g->memoryBytes;
      }
      b.ranks = st.tp();
      // The partition's time holds two boundary transfers (activations
      // out, gradients in) beside the compute; the analysis plays them as
      // transfers. Without a recorded forward share, forward:backward 1:2.
      double transfer = s + 1 < S ? st.transferSeconds : 0;
      double compute = std::max(0.0, st.seconds - 2 * transfer);
      b.forward = st.forwardSeconds > 0 ? std::min(st.forwardSeconds, compute)
                                        : compute / 3;
      b.backward = compute - b.forward;
      b.sendSeconds = transfer;
      b.peakBytes = st.peakBytes;
      // The partition checked the stage's memory with this many held.
      b.peakInFlight = pp.gpipe ? pipe.microBatches : S - s;
      b.activationBytes = st.activationBytes;
      for (const PhaseStep &ph : orders.pipelines[p][size_t(s)])
        b.order.push_back({ph.backward, ph.microBatch});
      stages.push_back(std::move(b));
    }
  }
  return out;
}

/// Seconds one message of `bytes` takes between the nodes of two stages, as
/// the timeline simulation prices an uncalibrated link: 80% of the
/// network's (or within a node the node link's) bandwidth plus a latency.
static double linkSeconds(const ClusterSpec &cluster, int a, int b,
                          double bytes) {
  bool known = a >= 0 && b >= 0 && size_t(a) < cluster.nodes.size() &&
               size_t(b) < cluster.nodes.size();
  if (known && a == b)
    return 10e-6 + bytes / (cluster.nodes[size_t(a)].bandwidthGBs() * 1e9 * 0.8);
  return cluster.network.latencyUs * 1e-6 +
         bytes / (cluster.network.bandwidthGbps / 8.0 * 1e9 * 0.8);
}

/// A trainable parameter read by ops of another stage than its own (a tied
/// embedding the head also uses): that stage sends its gradient to the
/// owner after each backward, and the owner's backward waits for it.
static void addTiedSends(ModuleOp module, const RecordedPartition &rec,
                         const ClusterSpec &cluster,
                         bubbles::ScheduleProblem &problem) {
  // (pipeline, reader, owner) -> bytes
  std::map<std::tuple<size_t, int64_t, int64_t>, double> bytes;
  module.walk([&](ParamOp param) {
    auto own = param->getAttrOfType<PlacementAttr>(kPlacementAttrName);
    auto type = dyn_cast<RankedTensorType>(param.getType());
    if (!own || !param.getTrainable() || !type || !type.hasStaticShape())
      return;
    double size = double(type.getNumElements()) *
                  double((type.getElementTypeBitWidth() + 7) / 8);
    for (size_t p = 0; p < own.on("pp").size(); ++p) {
      std::set<int64_t> readers;
      for (Operation *user : param->getUsers())
        if (auto st = user->getAttrOfType<PlacementAttr>(kPlacementAttrName))
          if (st.stageIn(p) >= 0 && st.stageIn(p) != own.stageIn(p))
            readers.insert(st.stageIn(p));
      for (int64_t r : readers)
        bytes[{p, r, own.stageIn(p)}] += size;
    }
  });
  for (auto &[key, b] : bytes) {
    auto [p, from, to] = key;
    if (p >= problem.pipelines.size() || p >= rec.plan.pipelines.size())
      continue;
    auto &stages = problem.pipelines[p];
    const auto &planned = rec.plan.pipelines[p].stages;
    if (from >= int64_t(stages.size()) || to >= int64_t(stages.size()))
      continue;
    stages[size_t(from)].backwardSends.push_back(
        {to, linkSeconds(cluster, planned[size_t(from)].node,
                         planned[size_t(to)].node, b)});
  }
}

FailureOr<ModuleBubbles> frenzy::analyzeModuleBubbles(ModuleOp module,
                                                      StringRef cluster,
                                                      StringRef pass) {
  auto rec = readPartition(module);
  if (failed(rec))
    return failure();
  if (!*rec)
    return emitError(module.getLoc())
           << pass << " needs the module's " << kLayoutAttrName
           << ": run frenzy-partition and frenzy-pipeline-schedule first";
  auto orders = readSchedule(module, (*rec)->plan);
  if (failed(orders))
    return failure();
  auto spec = clusterOfPartition(module, **rec, cluster);
  if (failed(spec))
    return failure();
  ModuleBubbles out;
  out.cluster = std::move(*spec);
  out.problem = scheduleProblem(**rec, *orders, out.cluster);
  addTiedSends(module, **rec, out.cluster, out.problem);
  auto a = bubbles::analyze(out.problem);
  if (!a)
    return emitError(module.getLoc())
           << pass << ": " << llvm::toString(a.takeError());
  out.analysis = std::move(*a);
  return out;
}

void frenzy::recordSideTasks(ModuleOp module,
                             const sidetasks::PlacementProblem &pr,
                             const sidetasks::Placement &pl) {
  Builder b(module.getContext());
  auto named = [&](StringRef k, Attribute v) { return b.getNamedAttr(k, v); };
  SmallVector<Attribute> tasks, slots;
  for (size_t t = 0; t < pr.tasks.size(); ++t) {
    const sidetasks::SideTask &task = pr.tasks[t];
    tasks.push_back(b.getDictionaryAttr(
        {named("name", b.getStringAttr(task.name)),
         named("kind", b.getStringAttr(sidetasks::kindName(task.kind))),
         named("memory_bytes", b.getI64IntegerAttr(task.memoryBytes)),
         named("steps", b.getI64IntegerAttr(task.steps)),
         named("priority", b.getI64IntegerAttr(task.priority)),
         named("placed_steps", b.getI64IntegerAttr(pl.taskSteps[t])),
         named("gpu_seconds", b.getF64FloatAttr(pl.taskGpuSeconds[t])),
         named("why", b.getStringAttr(pl.why[t]))}));
  }
  for (const sidetasks::Slot &s : pl.slots)
    slots.push_back(b.getDictionaryAttr(
        {named("task", b.getI64IntegerAttr(s.task)),
         named("pipeline", b.getI64IntegerAttr(s.pipeline)),
         named("stage", b.getI64IntegerAttr(s.stage)),
         named("start", b.getF64FloatAttr(s.start)),
         named("seconds", b.getF64FloatAttr(s.seconds)),
         named("steps", b.getI64IntegerAttr(s.steps)),
         named("memory_bytes", b.getI64IntegerAttr(s.memoryBytes)),
         named("before", b.getStringAttr(s.before))}));
  module->setAttr(
      kSideTasksAttrName,
      b.getDictionaryAttr(
          {named("memory_margin", b.getF64FloatAttr(pr.memoryMargin)),
           named("time_margin", b.getF64FloatAttr(pr.timeMargin)),
           named("step_seconds", b.getF64FloatAttr(pr.analysis->stepSeconds)),
           named("idle_gpu_seconds",
                 b.getF64FloatAttr(pr.analysis->idleGpuSeconds)),
           named("gpu_seconds", b.getF64FloatAttr(pl.gpuSeconds)),
           named("tasks", b.getArrayAttr(tasks)),
           named("slots", b.getArrayAttr(slots))}));
}

FailureOr<std::optional<RecordedSideTasks>>
frenzy::readSideTasks(ModuleOp module) {
  Attribute raw = module->getAttr(kSideTasksAttrName);
  if (!raw)
    return std::optional<RecordedSideTasks>();
  bool ok = true;
  auto fail = [&](const Twine &where, StringRef key, StringRef what) {
    if (ok)
      emitError(module.getLoc())
          << kSideTasksAttrName << ": " << where << key << " " << what;
    ok = false;
  };
  auto i64 = [&](DictionaryAttr d, const Twine &w, StringRef k) -> int64_t {
    auto a = d ? d.getAs<IntegerAttr>(k) : IntegerAttr();
    if (!a)
      fail(w, k, "is missing or not an integer");
    return a ? a.getInt() : 0;
  };
  auto f64 = [&](DictionaryAttr d, const Twine &w, StringRef k) -> double {
    auto a = d ? d.getAs<FloatAttr>(k) : FloatAttr();
    if (!a)
      fail(w, k, "is missing or not a float");
    return a ? a.getValueAsDouble() : 0;
  };
  auto str = [&](DictionaryAttr d, const Twine &w, StringRef k) {
    auto a = d ? d.getAs<StringAttr>(k) : StringAttr();
    if (!a)
      fail(w, k, "is missing or not a string");
    return a ? a.str() : std::string();
  };
  auto top = dyn_cast<DictionaryAttr>(raw);
  RecordedSideTasks out;
  out.gpuSeconds = f64(top, "", "gpu_seconds");
  auto tasks = top ? top.getAs<ArrayAttr>("tasks") : ArrayAttr();
  auto slots = top ? top.getAs<ArrayAttr>("slots") : ArrayAttr();
  if (!tasks || !slots)
    fail("", "tasks and slots", "must be arrays");
  for (size_t i = 0; ok && i < tasks.size(); ++i) {
    std::string w = "tasks[" + std::to_string(i) + "].";
    auto d = dyn_cast<DictionaryAttr>(tasks[i]);
    RecordedSideTask &t = out.tasks.emplace_back();
    t.name = str(d, w, "name");
    t.kind = str(d, w, "kind");
    t.why = str(d, w, "why");
    t.memoryBytes = i64(d, w, "memory_bytes");
    t.steps = i64(d, w, "steps");
    t.priority = i64(d, w, "priority");
    t.placedSteps = i64(d, w, "placed_steps");
    t.gpuSeconds = f64(d, w, "gpu_seconds");
    if (ok && t.kind != "step" && t.kind != "process")
      fail(w, "kind", "must be \"step\" or \"process\"");
  }
  for (size_t i = 0; ok && i < slots.size(); ++i) {
    std::string w = "slots[" + std::to_string(i) + "].";
    auto d = dyn_cast<DictionaryAttr>(slots[i]);
    RecordedSlot &s = out.slots.emplace_back();
    s.task = i64(d, w, "task");
    s.pipeline = i64(d, w, "pipeline");
    s.stage = i64(d, w, "stage");
    s.start = f64(d, w, "start");
    s.seconds = f64(d, w, "seconds");
    s.steps = i64(d, w, "steps");
    s.memoryBytes = i64(d, w, "memory_bytes");
    s.before = str(d, w, "before");
    if (ok && (s.task < 0 || s.task >= int64_t(out.tasks.size())))
      fail(w, "task", "is not an index into tasks");
    if (ok && !(s.seconds > 0 && s.start >= 0))
      fail(w, "seconds", "must be positive, and start not negative");
  }
  if (!ok)
    return failure();
  return std::optional<RecordedSideTasks>(std::move(out));
}
