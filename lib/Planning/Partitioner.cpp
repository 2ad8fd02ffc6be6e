//===- Partitioner.cpp - the planning problem from the IR's models --------===//
//
// The MLIR side of the planner: the cost and memory models (built from the
// training step's IR) and the cluster file become one plain-data
// PlanProblem, extracted once; the MLIR-free solvers (lib/Planning/Problem)
// do the rest. partition() is the fast solver plus --explain's list;
// evaluatePlan() scores a given plan (--layout, baselines, tests).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/Partitioner.h"

#include "frenzy/Cluster/DeviceProfile.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace frenzy;

bool frenzy::setRecompute(PartitionOptions &o, llvm::StringRef mode) {
  // Full recomputation is frenzy-launch's (a stage's forward rerun before
  // its backward), priced from the selective profile.
  if (mode == "auto") {
    o.recompute = Recompute::Selective;
    o.fullRecompute = 1;
    return true;
  }
  std::optional<Recompute> r = parseRecompute(mode);
  if (!r)
    return false;
  o.fullRecompute = *r == Recompute::Full ? 2 : 0;
  o.recompute = *r == Recompute::Full ? Recompute::Selective : *r;
  return true;
}

llvm::Expected<plan::PlanProblem>
frenzy::buildPlanProblem(const CostModel &cost, const MemoryModel &memory,
                         const ClusterSpec &cluster,
                         const PartitionOptions &options) {
  plan::PlanProblem p;
  plan::ModelProfile &m = p.model;
  m.layers = cost.numLayers();
  int r = int(options.recompute);
  int64_t moments = memory.optimizerMoments();
  m.referenceBatch = memory.referenceBatch();
  m.ioBytes = memory.headIoBytes();
  m.stateBytesPerParam =
      modelStateBytes(1, memory.precision(), int(moments), 1, 0).total();
  m.gradientBytesPerParam = precisionBytes(cost.precision()).gradient;
  m.boundaryBytesPerSequence = cost.boundaryBytesPerSequence();
  m.flopsPerSequence = cost.flopsPerSequence();
  MemoryOverheads defaults;
  m.fragmentation = defaults.fragmentation;
  // Block order: embedding, layers, head (the IR's kEmbed and kHead).
  std::vector<int64_t> irBlocks = {BlockAttr::kEmbed};
  for (int64_t l = 0; l < m.layers; ++l)
    irBlocks.push_back(l);
  irBlocks.push_back(BlockAttr::kHead);
  auto part = [](const MemoryModel::Part &x) {
    return plan::MemoryParts{x.split, x.layerOnly, x.whole};
  };
  for (int64_t b : irBlocks) {
    plan::BlockProfile bp;
    bp.params = cost.blockParams(b);
    if (const MemoryModel::BlockInfo *info = memory.block(b)) {
      bp.splitParams = info->splitParams;
      bp.wholeParams = info->wholeParams;
      bp.buffers = info->buffers;
      bp.saved = part(info->saved[r]);
      bp.transient = part(info->transient[r]);
    }
    m.blocks.push_back(bp);
  }

  const Efficiency &e = cost.efficiency();
  p.networkGBs = cluster.network.bandwidthGbps / 8.0;
  p.networkLatency = cluster.network.latencyUs * 1e-6;
  p.networkEfficiency = e.network;
  p.memoryEfficiency = e.memory;
  p.collectiveLatency = e.collectiveLatency;
  p.globalBatch = options.globalBatch;
  p.topology = cluster.topology;
  p.fullRecompute = options.fullRecompute;
  p.gpipe = options.gpipe;
  p.sequenceParallel = options.sequenceParallel;
  if (options.sequenceParallelAuto)
    p.sequenceParallel = llvm::all_of(
        p.tpDegrees, [&](int64_t tp) { return options.seq % tp == 0; });
  llvm::erase_if(p.tpDegrees,
                 [&](int64_t tp) { return options.tpRefused.count(tp); });
  for (const ClusterNode &n : cluster.nodes) {
    const GpuType *g = cluster.gpuType(n.gpu);
    if (!g)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "node '%s': unknown GPU type '%s'; known types: %s (or describe it "
          "under gpu_types:)",
          n.name.c_str(), n.gpu.c_str(), gpuTypeNames().c_str());
    auto it = llvm::find_if(p.devices, [&](const plan::DeviceProfile &d) {
      return d.name == g->name;
    });
    if (it == p.devices.end()) {
      plan::DeviceProfile d;
      d.name = g->name;
      d.memoryBytes = g->memoryBytes;
      d.tensorTflops = g->tensorTflops;
      d.memoryGBs = g->memoryGBs;
      d.contextBytes = g->contextBytes;
      d.commBufferBytes = g->commBufferBytes;
      d.workspaceBytes = g->workspaceBytes;
      for (int64_t b : irBlocks) {
        d.blockSeconds.push_back(cost.blockSeconds(b, *g, 1));
        if (options.fullRecompute)
          d.blockForwardSeconds.push_back(cost.blockForwardSeconds(b, *g, 1));
      }
      if (cost.precision() == Precision::BF16Mixed && !g->bf16)
        d.unusable = "no bf16 tensor cores; plan with --precision=fp16-mixed";
      p.devices.push_back(std::move(d));
      it = p.devices.end() - 1;
    }
    // A calibrated type's collectives run at the measured all-reduce rate
    // of its link kind (the scoring multiplies by the network efficiency).
    plan::Node node{n.name, int(it - p.devices.begin()), n.count,
                    n.bandwidthGBs()};
    if (g->profile && g->profile->calibrated)
      if (const LinkProfile *l = g->profile->link(n.link)) {
        node.linkGBs = l->reduceBandwidth / 1e9 / e.network;
        node.reduceMeasured = true;
        node.reduce = *l;
        node.reduceOverhead = g->profile->opOverhead;
      }
    p.nodes.push_back(std::move(node));
  }
  return p;
}

llvm::Expected<PartitionPlan>
frenzy::partition(const CostModel &cost, const MemoryModel &memory,
                  const ClusterSpec &cluster, const PartitionOptions &options,
                  std::vector<Alternative> *explain,
                  std::vector<PartitionPlan> *candidates, size_t keep) {
  auto problem = buildPlanProblem(cost, memory, cluster, options);
  if (!problem)
    return problem.takeError();
  // CPU ranks beyond a node's cores add no compute: they take turns on the
  // cores (the predicted timeline plays it, docs/calibration.md), so the
  // search places at most one rank per core where the profile counts them.
  // A pinned --layout (evaluatePlan) may still oversubscribe.
  for (size_t i = 0; i < problem->nodes.size(); ++i) {
    const GpuType *g = cluster.gpuType(cluster.nodes[i].gpu);
    if (g && g->profile && g->profile->cores > 0)
      problem->nodes[i].gpus =
          std::min<int64_t>(problem->nodes[i].gpus, g->profile->cores);
  }
  std::vector<std::pair<std::string, double>> ranked;
  plan::SolveOptions so;
  so.explain = explain ? &ranked : nullptr;
  so.candidates = candidates;
  so.keepCandidates = keep;
  auto best = plan::solveFast(*problem, so);
  if (!best || !explain)
    return best;
  for (const auto &[desc, seconds] : ranked)
    explain->push_back(
        {desc, seconds,
         desc == best->description
             ? std::string("chosen")
             : llvm::formatv("{0:f1}% slower",
                             100.0 * (seconds / best->stepSeconds() - 1.0))
                   .str()});
  return best;
}

llvm::Expected<PartitionPlan>
frenzy::evaluatePlan(const CostModel &cost, const MemoryModel &memory,
                     const ClusterSpec &cluster, const PartitionOptions &options,
                     const PartitionPlan &plan) {
  for (const Pipeline &pipe : plan.pipelines)
    for (const Stage &st : pipe.stages)
      if (auto it = options.tpRefused.find(st.tp());
          it != options.tpRefused.end())
        return llvm::createStringError(
            std::errc::invalid_argument,
            "TP %lld is refused: the model cannot be split %lld ways (%s); "
            "use a layout without TP %lld",
            (long long)it->first, (long long)it->first, it->second.c_str(),
            (long long)it->first);
  auto problem = buildPlanProblem(cost, memory, cluster, options);
  if (!problem)
    return problem.takeError();
  return plan::scorePlan(*problem, plan);
}
