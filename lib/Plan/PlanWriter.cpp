//===- PlanWriter.cpp - assemble and write plan.bin -----------------------===//
#include "frenzy/Plan/PlanWriter.h"

#include "frenzy/Dialect/Frenzy/IR/Precision.h"
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "plan.pb.h"
#include "plan/PlanFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace frenzy;

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

LogicalResult frenzy::buildPlan(ModuleOp module, ArrayRef<ModuleOp> more,
                                StringRef modelPath, StringRef clusterPath,
                                const ClusterSpec &cluster, plan::Plan &out) {
  out.set_version(plan::kPlanVersion);
  SmallString<256> abs(modelPath);
  llvm::sys::fs::make_absolute(abs);
  out.set_model_path(abs.str().str());
  uint64_t hash = 0;
  if (!plan::hashFile(abs.str().str(), hash))
    return module.emitError("cannot read the model file to hash it: ") << abs;
  out.set_model_hash(hash);
  SmallString<256> absCluster(clusterPath);
  llvm::sys::fs::make_absolute(absCluster);
  out.set_cluster_path(absCluster.str().str());
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
  for (const ClusterNode &n : cluster.nodes)
    for (int64_t i = 0; i < n.count; ++i) {
      plan::Device *dev = out.add_devices();
      dev->set_node(n.name);
      dev->set_gpu_type(n.gpu);
      dev->set_index(i);
    }
  // The node map only where nodes name hosts: other plans stay as they were.
  if (llvm::any_of(cluster.nodes,
                   [](const ClusterNode &n) { return !n.host.empty(); }))
    for (const ClusterNode &n : cluster.nodes) {
      plan::NodeHost *node = out.add_nodes();
      node->set_name(n.name);
      node->set_host(n.host);
    }
  if (failed(lowerProgram(module, *out.mutable_program())))
    return failure();
  for (ModuleOp m : more)
    if (failed(lowerProgram(m, *out.add_more_programs())))
      return failure();

  // The partition and schedule the passes recorded, translated as they are.
  auto rec = readPartition(module);
  if (failed(rec))
    return failure();
  if (!*rec)
    return success();
  const PartitionPlan &pp = (*rec)->plan;
  if (failed(checkAgainst(module, pp, cluster)))
    return failure();
  auto orders = readSchedule(module, pp);
  if (failed(orders))
    return failure();
  addStagePrograms(pp, cluster, (*rec)->options, *orders, out);
  return addSideTaskSlots(module, out);
}

llvm::Error frenzy::writePlanFile(const plan::Plan &plan, StringRef path) {
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
  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError(ec, "%s: cannot write: %s", tmp.c_str(),
                                     ec.message().c_str());
    os << plan::encodePlanFile(bytes);
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
