//===- PlanWriter.cpp - assemble and write plan.bin -----------------------===//
#include "frenzy/Plan/PlanWriter.h"

#include "frenzy/Dialect/Frenzy/IR/Precision.h"
#include "plan.pb.h"
#include "plan/PlanFile.h"

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

LogicalResult frenzy::buildPlan(ModuleOp module, StringRef modelPath,
                                StringRef clusterPath,
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
  return lowerProgram(module, *out.mutable_program());
}

llvm::Error frenzy::writePlanFile(const plan::Plan &plan, StringRef path) {
  std::string bytes;
  if (!plan.SerializeToString(&bytes))
    return llvm::createStringError(std::errc::io_error,
                                   "cannot serialise the plan");
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
