//===- PlanWriter.cpp - the one place plan.bin is built -------------------===//
//
// buildPlan derives everything first (PlanParts.h: programs, stages and
// transfers from the IR, groups, streams, side-task slots), then prices
// every action with the timeline simulation, and only then assembles the
// Plan message, once, from those parts. The simulation reads a plan, so it
// is given the same assembly without the prices (a skeleton nobody keeps);
// nothing edits a plan after it is built.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Target/Plan/PlanWriter.h"

#include "PlanParts.h"

#include "frenzy/Dialect/Frenzy/IR/Precision.h"
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/Planning/TimelineSimulation.h"
#include "plan.pb.h"
#include "plan/PlanFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace frenzy;
using namespace frenzy::target;

/// Plans of more ranks get no action times. The simulation's ops look up
/// every rank's stage, node and groups by scanning the plan, so its cost
/// grows with ranks squared: 0.1 s at 1,000 ranks, ~0.5 s at 10,000,
/// ~400 s at 100,000 (bench/large_cluster.sh). A plan of thousands of
/// ranks is not one a CPU emulation (one process per rank) runs, and
/// without action times --emulate-speed scales forwards and backwards.
static constexpr int kMaxPricedRanks = 4096;

static double f64(DictionaryAttr d, StringRef key, double dflt = 0) {
  if (auto a = d.getAs<FloatAttr>(key))
    return a.getValueAsDouble();
  return dflt;
}
static int64_t i64(DictionaryAttr d, StringRef key) {
  if (auto a = d.getAs<IntegerAttr>(key))
    return a.getInt();
  return 0;
}

/// The recorded stages name nodes and devices of this cluster.
static LogicalResult checkAgainst(ModuleOp module, const PartitionPlan &pp,
                                  const ClusterSpec &cluster) {
  for (size_t p = 0; p < pp.pipelines.size(); ++p)
    for (size_t s = 0; s < pp.pipelines[p].stages.size(); ++s) {
      const Stage &st = pp.pipelines[p].stages[s];
      auto where = [&] {
        return emitError(module.getLoc())
               << kLayoutAttrName << ": pipelines[" << p << "].stages[" << s
               << "]: ";
      };
      if (st.node < 0 || size_t(st.node) >= cluster.nodes.size())
        return where() << "node " << st.node << " is not a node of the "
                       << "cluster (" << cluster.nodes.size()
                       << "); partition again with this cluster";
      for (int64_t d : st.devices)
        if (d < 0 || d >= cluster.nodes[size_t(st.node)].count)
          return where() << "device " << d << " is not on node '"
                         << cluster.nodes[size_t(st.node)].name << "' ("
                         << cluster.nodes[size_t(st.node)].count
                         << " GPUs); partition again with this cluster";
    }
  return success();
}

namespace {
/// Everything the plan is assembled from.
struct PlanInputs {
  ModuleOp module;
  std::string modelPath, clusterPath; // absolute
  uint64_t modelHash = 0;
  const ClusterSpec *cluster = nullptr;
  LoweredPrograms lowered;
  std::optional<RecordedPartition> partition;
  std::string scheduleName; // the ranks' schedule: 1f1b | gpipe
  PlacedPlan placed;
  std::vector<plan::SideTask> sideTasks;
  double sideTaskSeconds = 0;
};
} // namespace

/// The model, precision, shapes and optimizer.
static void assembleHeader(const PlanInputs &in, plan::Plan &out) {
  ModuleOp module = in.module;
  out.set_version(plan::kPlanVersion);
  out.set_model_path(in.modelPath);
  out.set_model_hash(in.modelHash);
  out.set_cluster_path(in.clusterPath);
  out.set_precision(precisionName(getPrecision(module)).str());
  if (auto b = module->getAttrOfType<IntegerAttr>("frenzy.batch"))
    out.set_batch(b.getInt());
  if (auto s = module->getAttrOfType<IntegerAttr>("frenzy.seq"))
    out.set_seq(s.getInt());
  if (auto d = module->getAttrOfType<DictionaryAttr>("frenzy.optimizer")) {
    plan::Optimizer *o = out.mutable_optimizer();
    if (auto k = d.getAs<StringAttr>("kind"))
      o->set_kind(k.str());
    o->set_lr(f64(d, "lr"));
    o->set_min_lr(f64(d, "min_lr"));
    o->set_warmup_steps(i64(d, "warmup_steps"));
    o->set_total_steps(i64(d, "total_steps"));
    o->set_clip_norm(f64(d, "clip_norm"));
    o->set_beta1(f64(d, "beta1"));
    o->set_beta2(f64(d, "beta2"));
    o->set_eps(f64(d, "eps"));
    o->set_momentum(f64(d, "momentum"));
  }
  // The node map only where nodes name hosts: other plans stay as they were.
  const ClusterSpec &cluster = *in.cluster;
  if (llvm::any_of(cluster.nodes,
                   [](const ClusterNode &n) { return !n.host.empty(); }))
    for (const ClusterNode &n : cluster.nodes) {
      plan::NodeHost *node = out.add_nodes();
      node->set_name(n.name);
      node->set_host(n.host);
    }
}

/// The stage, its ranks (one device each) and their streams.
static void assembleStage(const PlanInputs &in, const StageWork &sw,
                          const std::vector<std::vector<double>> *seconds,
                          plan::Plan &out) {
  const Stage &st = *sw.stage;
  const Pipeline &pipe =
      in.partition->plan.pipelines[size_t(sw.pipeline)];
  const ClusterNode &node = in.cluster->nodes[size_t(st.node)];
  const PlacedPlan &pl = in.placed;
  plan::StageProgram *sp = out.add_stages();
  sp->set_program(sw.program);
  sp->set_pipeline(sw.pipeline);
  sp->set_stage(sw.index);
  sp->set_first_layer(st.firstLayer);
  sp->set_last_layer(st.lastLayer);
  sp->set_embed(st.embed);
  sp->set_head(st.head);
  sp->set_micro_batches(pipe.microBatches);
  sp->set_first_micro_batch(sw.firstMicroBatch);
  sp->set_predicted_seconds(st.seconds);
  sp->set_recompute_forward(st.fullRecompute);
  sp->mutable_instrs()->Add(sw.instrs.begin(), sw.instrs.end());
  sp->mutable_forward_instrs()->Add(sw.forward.begin(), sw.forward.end());
  sp->mutable_backward_instrs()->Add(sw.backward.begin(), sw.backward.end());
  sp->mutable_update_instrs()->Add(sw.update.begin(), sw.update.end());
  sp->mutable_recv_tensors()->Add(sw.recv.begin(), sw.recv.end());
  sp->mutable_send_tensors()->Add(sw.send.begin(), sw.send.end());
  for (size_t i = 0; i < sw.ranks.size(); ++i) {
    int32_t id = sw.ranks[i];
    sp->add_ranks(id);
    plan::Device *d = out.add_devices();
    d->set_node(node.name);
    d->set_gpu_type(node.gpu);
    d->set_index(int32_t(st.devices[i]));
    plan::Rank *r = out.mutable_ranks(id);
    r->set_id(id);
    r->set_node(node.name);
    r->set_gpu_type(node.gpu);
    r->set_device(int32_t(st.devices[i]));
    r->set_pipeline(sw.pipeline);
    r->set_stage(sw.index);
    r->set_tp_rank(int32_t(i));
    r->set_predicted_peak_bytes(st.peakBytes);
    if (const GpuType *g = in.cluster->gpuType(node.gpu))
      r->set_context_bytes(g->contextBytes);
    const std::vector<int32_t> &norm = pl.normTensors[size_t(id)];
    r->mutable_norm_tensors()->Add(norm.begin(), norm.end());
    const std::vector<plan::Action> &stream = pl.streams[size_t(id)];
    const std::vector<double> *sec =
        seconds && size_t(id) < seconds->size() ? &(*seconds)[size_t(id)]
                                                : nullptr;
    for (size_t k = 0; k < stream.size(); ++k) {
      plan::Action *a = r->add_stream();
      *a = stream[k];
      if (sec && k < sec->size())
        a->set_predicted_seconds((*sec)[k]);
    }
  }
}

/// The whole plan from its parts; `seconds` are the actions' predicted
/// durations (per rank, per stream position), null for none.
static void assemble(const PlanInputs &in,
                     const std::vector<std::vector<double>> *seconds,
                     plan::Plan &out) {
  assembleHeader(in, out);
  *out.mutable_program() = in.lowered.programs.front();
  for (size_t k = 1; k < in.lowered.programs.size(); ++k)
    *out.add_more_programs() = in.lowered.programs[k];
  if (!in.partition) {
    // One device per GPU of the cluster.
    for (const ClusterNode &n : in.cluster->nodes)
      for (int64_t i = 0; i < n.count; ++i) {
        plan::Device *dev = out.add_devices();
        dev->set_node(n.name);
        dev->set_gpu_type(n.gpu);
        dev->set_index(int32_t(i));
      }
    return;
  }
  const PartitionPlan &pp = in.partition->plan;
  out.set_micro_batch(pp.microBatch);
  out.set_global_batch(in.partition->options.globalBatch);
  out.set_predicted_step_seconds(pp.stepSeconds());
  const PlacedPlan &pl = in.placed;
  for (int32_t r = 0; r < pl.ranks; ++r)
    out.add_ranks()->set_schedule(in.scheduleName);
  for (const PipelineWork &pw : pl.pipelines)
    for (const StageWork &sw : pw.stages)
      assembleStage(in, sw, seconds, out);
  out.set_total_micro_batches(pl.totalMicroBatches);
  for (const plan::CommGroup &g : pl.groups)
    *out.add_groups() = g;
  for (const plan::SideTask &t : in.sideTasks)
    *out.add_side_tasks() = t;
  out.set_side_task_gpu_seconds(in.sideTaskSeconds);
}

/// The programs of `module` (Plan.program) and `more` (more_programs).
static LogicalResult lowerAll(ModuleOp module, ArrayRef<ModuleOp> more,
                              LoweredPrograms &out) {
  std::vector<ModuleOp> all = {module};
  all.insert(all.end(), more.begin(), more.end());
  out.programs.resize(all.size());
  out.ops.resize(all.size());
  for (size_t k = 0; k < all.size(); ++k)
    if (failed(lowerProgram(all[k], out.programs[k], &out.ops[k])))
      return failure();
  return success();
}

LogicalResult frenzy::buildPlan(ModuleOp module, ArrayRef<ModuleOp> more,
                                StringRef modelPath, StringRef clusterPath,
                                const ClusterSpec &cluster, plan::Plan &out) {
  PlanInputs in;
  in.module = module;
  in.cluster = &cluster;
  SmallString<256> abs(modelPath);
  llvm::sys::fs::make_absolute(abs);
  in.modelPath = abs.str().str();
  if (!plan::hashFile(in.modelPath, in.modelHash))
    return module.emitError("cannot read the model file to hash it: ") << abs;
  SmallString<256> absCluster(clusterPath);
  llvm::sys::fs::make_absolute(absCluster);
  in.clusterPath = absCluster.str().str();
  if (failed(lowerAll(module, more, in.lowered)))
    return failure();

  // The partition and schedule the passes recorded, translated as they are.
  auto rec = readPartition(module);
  if (failed(rec))
    return failure();
  if (!*rec) {
    assemble(in, nullptr, out);
    return success();
  }
  in.partition = std::move(**rec);
  const PartitionPlan &pp = in.partition->plan;
  if (failed(checkAgainst(module, pp, cluster)))
    return failure();
  auto orders = readSchedule(module, pp);
  if (failed(orders))
    return failure();
  in.scheduleName = scheduleName(orders->kind).str();
  placeStages(pp, in.lowered, in.placed);
  commGroups(in.lowered, in.placed);
  rankStreams(*orders, in.placed);
  if (failed(placeSideTaskSlots(module, in.placed, in.sideTasks,
                                in.sideTaskSeconds)))
    return failure();

  // Each action's predicted duration, for frenzy-launch's speed emulation.
  std::vector<std::vector<double>> seconds;
  if (in.placed.ranks <= kMaxPricedRanks) {
    plan::Plan skeleton;
    assemble(in, nullptr, skeleton);
    seconds = predictedActionSeconds(skeleton, cluster);
  }
  assemble(in, &seconds, out);
  return success();
}

llvm::Expected<std::string> frenzy::encodePlan(const plan::Plan &plan) {
  // Deterministic serialisation: protobuf otherwise writes map entries
  // (instruction attributes) in hash order, which differs run to run, and
  // the same command must give the same bytes (a checkpoint names its plan).
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!plan.SerializeToCodedStream(&coded))
      return llvm::createStringError(std::errc::io_error,
                                     "cannot serialise the plan");
  }
  return plan::encodePlanFile(bytes);
}

llvm::Error frenzy::writePlanFile(const plan::Plan &plan, StringRef path) {
  auto bytes = encodePlan(plan);
  if (!bytes)
    return bytes.takeError();
  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError(ec, "%s: cannot write: %s", tmp.c_str(),
                                     ec.message().c_str());
    os << *bytes;
    os.close();
    if (os.has_error())
      return llvm::createStringError(os.error(), "%s: write failed",
                                     tmp.c_str());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return llvm::createStringError(ec, "%s: cannot rename into place: %s",
                                   path.str().c_str(), ec.message().c_str());
  return llvm::Error::success();
}
