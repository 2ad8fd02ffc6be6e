//===- CostModel.cpp - predicted time of a training step ------------------===//
#include "frenzy/Planning/CostModel.h"

#include "frenzy/Cluster/DeviceProfile.h"
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace frenzy;

FailureOr<CostModel> CostModel::build(ModuleOp module, Precision precision,
                                      Efficiency eff) {
  CostModel m;
  m.prec = precision;
  m.eff = eff;
  if (auto b = module->getAttrOfType<IntegerAttr>("frenzy.batch"))
    m.batch0 = std::max<int64_t>(1, b.getInt());
  if (auto n = module->getAttrOfType<IntegerAttr>("frenzy.num_blocks"))
    m.layers = n.getInt();
  auto func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func)
    return module.emitError("the cost model needs @train_step (run "
                            "frenzy-autodiff first)");
  // IR tensors are f32; the policy's activation size scales their bytes.
  double scale = double(precisionBytes(precision).activation) / 4.0;
  func.walk([&](Operation *op) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      if (p.getTrainable())
        m.params[blockIndexOf(op)] +=
            cast<RankedTensorType>(p.getType()).getNumElements();
      return;
    }
    auto c = dyn_cast<CostOpInterface>(op);
    if (!c || isa<ConstantOp>(op))
      return;
    OpCost oc;
    oc.flops = double(c.getFlops());
    oc.bytes = double(c.getBytesRead() + c.getBytesWritten()) * scale;
    oc.contraction =
        isa<MatMulOp, GemmOp, AttentionOp, AttentionGradOp>(op);
    oc.attention = isa<AttentionOp, AttentionGradOp>(op);
    oc.forward = !op->hasAttr("frenzy.backward") &&
                 !isa<AdamWUpdateOp, SGDUpdateOp>(op);
    m.totalFlops += oc.flops;
    m.ops[blockIndexOf(op)].push_back(oc);
    // The hidden state crossing a block boundary: a forward value produced
    // in one layer and read in the next.
    if (!op->hasAttr("frenzy.backward"))
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          if (!user->hasAttr("frenzy.backward") &&
              blockIndexOf(user) != blockIndexOf(op) && blockIndexOf(op) >= 0 &&
              blockIndexOf(op) != BlockAttr::kHead)
            m.boundaryBytes = std::max<int64_t>(
                m.boundaryBytes,
                int64_t(double(tensorBytes(r.getType())) * scale /
                        double(m.batch0)));
  });
  return m;
}

double CostModel::blockSeconds(int64_t block, const GpuType &gpu,
                               int64_t microBatch) const {
  if (gpu.profile) { // measured rates (frenzy-calibrate), at this size
    auto key = std::make_tuple(block, gpu.name, microBatch);
    auto it = profiled.find(key);
    if (it != profiled.end())
      return it->second;
    double f = double(microBatch) / double(batch0), s = 0;
    auto b = ops.find(block);
    if (b != ops.end())
      for (const OpCost &oc : b->second)
        s += gpu.profile->kernelSeconds(
            oc.attention     ? KernelKind::Attention
            : oc.contraction ? KernelKind::Contraction
                             : KernelKind::MemoryBound,
            oc.flops * f, oc.bytes * f);
    return profiled[key] = s;
  }
  auto key = std::make_pair(block, gpu.name);
  auto it = cache.find(key);
  double perBatch0;
  if (it != cache.end()) {
    perBatch0 = it->second;
  } else {
    perBatch0 = 0;
    auto b = ops.find(block);
    if (b != ops.end())
      for (const OpCost &oc : b->second) {
        double compute = oc.flops / (gpu.tensorTflops * 1e12 *
                                     (oc.contraction ? eff.matmul : 0.1));
        double memory = oc.bytes / (gpu.memoryGBs * 1e9 * eff.memory);
        perBatch0 += std::max(compute, memory);
      }
    cache[key] = perBatch0;
  }
  return perBatch0 * double(microBatch) / double(batch0);
}

double CostModel::opSeconds(const OpCost &oc, const GpuType &gpu,
                            double f) const {
  if (gpu.profile)
    return gpu.profile->kernelSeconds(oc.attention     ? KernelKind::Attention
                                      : oc.contraction ? KernelKind::Contraction
                                                       : KernelKind::MemoryBound,
                                      oc.flops * f, oc.bytes * f);
  double compute = oc.flops * f / (gpu.tensorTflops * 1e12 *
                                   (oc.contraction ? eff.matmul : 0.1));
  double memory = oc.bytes * f / (gpu.memoryGBs * 1e9 * eff.memory);
  return std::max(compute, memory);
}

double CostModel::blockForwardSeconds(int64_t block, const GpuType &gpu,
                                      int64_t microBatch) const {
  double f = double(microBatch) / double(batch0), s = 0;
  auto b = ops.find(block);
  if (b != ops.end())
    for (const OpCost &oc : b->second)
      if (oc.forward)
        s += opSeconds(oc, gpu, f);
  return s;
}

int64_t CostModel::blockParams(int64_t block) const {
  auto it = params.find(block);
  return it == params.end() ? 0 : it->second;
}
