//===- JobOptions.cpp - the option table the scheduler reads --------------===//
//
// The thin adapter between the compiler and the MLIR-free scheduler: the
// memory model and the partitioner run here, once per model, over sub-
// clusters of the user's cluster (n GPUs of one type, or a two-type mix),
// and the results go to a plain text table (lib/Scheduler/OptionTable.cpp)
// that frenzy-sched caches per model. A sub-cluster takes whole nodes of
// the type in file order, the last one partly.
//
//===----------------------------------------------------------------------===//
#include "JobOptions.h"

#include "frenzy/Analysis/Memory/MemoryModel.h"
#include "frenzy/Planning/CostModel.h"
#include "frenzy/Scheduler/Options.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

#include <map>

using namespace frenzy;

namespace {

/// `parts` GPUs of each named type, taken node by node.
ClusterSpec subCluster(const ClusterSpec &c,
                       const std::vector<std::pair<std::string, int64_t>> &parts) {
  ClusterSpec s;
  s.name = c.name;
  s.network = c.network;
  s.gpuTypes = c.gpuTypes;
  for (const auto &[type, count] : parts) {
    int64_t need = count;
    for (const ClusterNode &n : c.nodes) {
      const GpuType *g = c.gpuType(n.gpu);
      if (!need || !g || g->name != type)
        continue;
      ClusterNode part = n;
      part.count = std::min(need, n.count);
      need -= part.count;
      s.nodes.push_back(part);
    }
  }
  return s;
}

/// The plan as a scheduler option: GPUs per type, TP groups that must share
/// a node, and the predicted step.
sched::JobOption toOption(const PartitionPlan &plan, const ClusterSpec &sub,
                          const sched::SchedCluster &whole) {
  std::map<int, int64_t> count, group;
  int64_t peak = 0;
  for (const Pipeline &p : plan.pipelines)
    for (const Stage &st : p.stages) {
      const GpuType *g = sub.gpuType(sub.nodes[st.node].gpu);
      int t = whole.typeIndex(g->name);
      count[t] += st.tp();
      // One group size per type when every stage agrees, else 1.
      auto [it, fresh] = group.try_emplace(t, st.tp());
      if (!fresh && it->second != st.tp())
        it->second = 1;
      peak = std::max(peak, st.peakBytes);
    }
  sched::JobOption o;
  for (const auto &[t, n] : count)
    o.gpus.push_back({t, n, n % group[t] ? 1 : group[t]});
  const Pipeline &first = plan.pipelines.front();
  o.tp = first.stages.front().tp();
  o.pp = int64_t(first.stages.size());
  o.dp = int64_t(plan.pipelines.size());
  o.stepSeconds = plan.stepSeconds();
  o.peakBytes = peak;
  o.layout = plan.description;
  for (char &ch : o.layout)
    if (ch == '\n')
      ch = ' ';
  return o;
}

std::vector<int64_t> counts(const sched::SchedType &t, int64_t cap) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= std::min(t.total, cap); n *= 2)
    out.push_back(n);
  for (int64_t n = t.perNode; n <= std::min(t.total, cap); n += t.perNode)
    out.push_back(n);
  llvm::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace

int frenzy::writeJobOptions(mlir::ModuleOp module, const ClusterSpec &cluster,
                            const PartitionOptions &po, llvm::StringRef input,
                            llvm::StringRef output) {
  if (output != "-" && llvm::sys::fs::equivalent(input, output)) {
    llvm::errs() << "frenzy-opt: error: -o " << output
                 << " is the model file itself; refusing to overwrite it\n";
    return 1;
  }
  auto whole = sched::SchedCluster::build(cluster);
  if (!whole) {
    llvm::errs() << "frenzy-opt: error: " << llvm::toString(whole.takeError())
                 << "\n";
    return 1;
  }
  auto memory = MemoryModel::build(module, std::nullopt);
  if (mlir::failed(memory))
    return 1;
  auto cost = CostModel::build(module, memory->precision());
  if (mlir::failed(cost))
    return 1;
  auto plan = [&](const std::vector<std::pair<std::string, int64_t>> &parts)
      -> std::optional<sched::JobOption> {
    ClusterSpec sub = subCluster(cluster, parts);
    auto p = partition(*cost, *memory, sub, po);
    if (!p) {
      llvm::consumeError(p.takeError()); // does not fit there: no option
      return std::nullopt;
    }
    return toOption(*p, sub, *whole);
  };
  std::vector<sched::JobOption> options;
  const auto &types = whole->types();
  // Alone: a larger count only when it is faster than every smaller one.
  std::vector<double> fastest(types.size(), INFINITY);
  std::vector<std::map<int64_t, double>> alone(types.size());
  for (size_t t = 0; t < types.size(); ++t)
    for (int64_t n : counts(types[t], INT64_MAX)) {
      auto o = plan({{types[t].gpu.name, n}});
      alone[t][n] = o ? o->stepSeconds : INFINITY;
      if (o && o->stepSeconds < 0.98 * fastest[t]) {
        fastest[t] = o->stepSeconds;
        options.push_back(*o);
      }
    }
  // Mixed: kept when faster than either part's GPUs alone (the partitioner
  // may also leave a type out; such a plan is not mixed and is dropped).
  for (size_t a = 0; a < types.size(); ++a)
    for (size_t b = a + 1; b < types.size(); ++b)
      for (int64_t na : counts(types[a], 16))
        for (int64_t nb : counts(types[b], 16)) {
          auto o = plan({{types[a].gpu.name, na}, {types[b].gpu.name, nb}});
          if (o && o->mixed() && o->stepSeconds < alone[a][na] &&
              o->stepSeconds < alone[b][nb])
            options.push_back(*o);
        }
  std::string error;
  auto out = mlir::openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
    return 1;
  }
  writeOptionTable(options, *whole,
                   llvm::formatv("model={0} global_batch={1} seq={2} "
                                 "(memory model + partitioner)",
                                 input, po.globalBatch, po.seq)
                       .str(),
                   out->os());
  out->keep();
  llvm::errs() << "frenzy-opt: " << options.size() << " job options for "
               << input << "\n";
  return 0;
}
