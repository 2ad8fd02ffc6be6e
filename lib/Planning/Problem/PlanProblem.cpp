//===- PlanProblem.cpp - checking a problem and verifying a solution ------===//
//
// check() rejects input the solvers would misread (a node naming no device,
// a profile with the wrong number of blocks, non-positive counts); verify()
// is what every solver's answer must satisfy, so tests can hold any solver
// to it.
//
//===----------------------------------------------------------------------===//
#include "PlanCost.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <set>

namespace frenzy::plan {

static llvm::Error fail(const std::string &what) {
  return llvm::createStringError(std::errc::invalid_argument, "%s",
                                 what.c_str());
}

int64_t PlanProblem::totalGpus() const {
  int64_t n = 0;
  for (const Node &node : nodes)
    n += node.gpus;
  return n;
}

llvm::Error PlanProblem::check() const {
  size_t blocks = size_t(model.layers + 2);
  if (model.layers < 0 || model.blocks.size() != blocks)
    return fail(llvm::formatv("plan problem: model.blocks has {0} entries, "
                              "expected layers + 2 = {1}",
                              model.blocks.size(), blocks));
  if (model.referenceBatch < 1)
    return fail("plan problem: model.referenceBatch must be positive");
  if (devices.empty() || nodes.empty())
    return fail("plan problem: no devices or no nodes");
  for (const DeviceProfile &d : devices) {
    if (d.blockSeconds.size() != blocks)
      return fail(llvm::formatv("plan problem: device '{0}' has {1} block "
                                "times, expected {2}",
                                d.name, d.blockSeconds.size(), blocks));
    if (d.memoryBytes <= 0 || d.memoryGBs <= 0)
      return fail(llvm::formatv("plan problem: device '{0}': memory and "
                                "memory bandwidth must be positive",
                                d.name));
    for (double s : d.blockSeconds)
      if (!(s >= 0) || std::isinf(s))
        return fail(llvm::formatv("plan problem: device '{0}': a block time "
                                  "is negative or not finite",
                                  d.name));
  }
  for (const Node &n : nodes) {
    if (n.device < 0 || n.device >= int(devices.size()))
      return fail(llvm::formatv("plan problem: node '{0}' names device {1}, "
                                "there are {2}",
                                n.name, n.device, devices.size()));
    if (n.gpus <= 0 || n.linkGBs <= 0)
      return fail(llvm::formatv("plan problem: node '{0}': GPU count and "
                                "link bandwidth must be positive",
                                n.name));
  }
  if (networkGBs <= 0 || networkEfficiency <= 0 || memoryEfficiency <= 0)
    return fail("plan problem: network bandwidth and efficiencies must be "
                "positive");
  if (globalBatch < 1)
    return fail("plan problem: the global batch must be positive");
  if (usableMicroBatches(*this).empty())
    return fail(llvm::formatv("plan problem: no micro-batch size divides the "
                              "global batch {0}",
                              globalBatch));
  for (int64_t tp : tpDegrees)
    if (tp < 1)
      return fail("plan problem: TP degrees must be positive");
  return llvm::Error::success();
}

llvm::Error verify(const PlanProblem &p, const PartitionPlan &plan) {
  if (plan.microBatch < 1 || p.globalBatch % plan.microBatch)
    return fail(llvm::formatv("plan: micro-batch {0} does not divide the "
                              "global batch {1}",
                              plan.microBatch, p.globalBatch));
  if (plan.pipelines.empty())
    return fail("plan: no pipelines");
  PlanCost cost(p);
  std::set<std::pair<int, int64_t>> used;
  int64_t sequences = 0;
  int64_t L = std::max<int64_t>(1, p.model.layers);
  for (size_t i = 0; i < plan.pipelines.size(); ++i) {
    const Pipeline &q = plan.pipelines[i];
    if (q.stages.empty() || q.microBatches < 1)
      return fail(llvm::formatv("plan: pipeline {0} has no stages or no "
                                "micro-batches",
                                i));
    sequences += q.microBatches * plan.microBatch;
    int64_t next = 0, depth = int64_t(q.stages.size());
    for (int64_t s = 0; s < depth; ++s) {
      const Stage &st = q.stages[s];
      auto where = llvm::formatv("plan: pipeline {0} stage {1}", i, s).str();
      if (st.node < 0 || st.node >= int(p.nodes.size()))
        return fail(where + ": no such node");
      if (st.embed != (s == 0) || st.head != (s == depth - 1))
        return fail(where + ": the embedding must be on the first stage and "
                            "the head on the last");
      if (st.devices.empty())
        return fail(where + ": no GPUs");
      for (int64_t d : st.devices) {
        if (d < 0 || d >= p.nodes[st.node].gpus)
          return fail(where + llvm::formatv(": GPU {0} is not on node '{1}'",
                                            d, p.nodes[st.node].name)
                                  .str());
        if (!used.insert({st.node, d}).second)
          return fail(where + llvm::formatv(": GPU {0} of node '{1}' is "
                                            "used twice",
                                            d, p.nodes[st.node].name)
                                  .str());
      }
      bool emptyOk = p.model.layers == 0;
      if (!emptyOk && (st.firstLayer != next || st.lastLayer < st.firstLayer))
        return fail(where + llvm::formatv(": layers {0}-{1}, expected to "
                                          "start at {2}",
                                          st.firstLayer, st.lastLayer, next)
                                .str());
      next = st.lastLayer + 1;
      int device = p.nodes[st.node].device;
      if (!p.devices[device].unusable.empty())
        return fail(where + ": " + p.devices[device].name + " " +
                    p.devices[device].unusable);
      int64_t peak =
          cost.stagePeak(device, st.tp(), st.firstLayer, st.lastLayer,
                         st.embed, st.head, depth - s, plan.microBatch,
                         st.fullRecompute);
      if (peak > p.devices[device].memoryBytes)
        return fail(where + llvm::formatv(": needs {0} bytes per GPU, {1} "
                                          "has {2}",
                                          peak, p.devices[device].name,
                                          p.devices[device].memoryBytes)
                                .str());
    }
    if (p.model.layers > 0 && next != L)
      return fail(llvm::formatv("plan: pipeline {0} covers layers up to {1}, "
                                "the model has {2}",
                                i, next, L));
  }
  if (sequences != p.globalBatch)
    return fail(llvm::formatv("plan: batch shares sum to {0} sequences, the "
                              "global batch is {1}",
                              sequences, p.globalBatch));
  return llvm::Error::success();
}

} // namespace frenzy::plan
