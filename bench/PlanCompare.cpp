//===- PlanCompare.cpp - Frenzy's plan against two baselines --------------===//
//
// frenzy-plan-compare MODEL.onnx --seq=T --global-batch=G CLUSTER.yaml...
//     [--precision=P] [--loss=cross-entropy]
// For each cluster, predicted tokens/s of: Frenzy's plan ("mixed" when a
// pipeline spans GPU types) and the GPUs it uses; Frenzy's search without
// mixed-type pipelines; a FlashFlex-style
// plan (Frenzy's pipelines and stages, but layers split in proportion to
// each stage's compute, tensor TFLOPS x TP, as FlashFlex's initial
// assignment does); and the best homogeneous-subset plan (Frenzy's search on
// one GPU type's nodes alone). All scored by the same cost and memory
// models (evaluatePlan), so the comparison isolates the plan. Not a test.
//
//===----------------------------------------------------------------------===//
#include "BenchModel.h"

#include "frenzy/InitAll.h"
#include "frenzy/Planning/Partitioner.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace frenzy;

namespace {

double tokensPerSecond(const PartitionPlan &p, const PartitionOptions &o) {
  return double(o.globalBatch * o.seq) / p.stepSeconds();
}

/// Re-splits every pipeline's layers in proportion to stage compute.
PartitionPlan proportional(PartitionPlan plan, const ClusterSpec &c,
                           int64_t layers) {
  for (Pipeline &p : plan.pipelines) {
    double total = 0;
    std::vector<double> w;
    for (const Stage &s : p.stages) {
      w.push_back(c.gpuType(c.nodes[s.node].gpu)->tensorTflops *
                  double(s.tp()));
      total += w.back();
    }
    int64_t first = 0;
    double acc = 0;
    for (size_t i = 0; i < p.stages.size(); ++i) {
      acc += w[i];
      int64_t end = i + 1 == p.stages.size()
                        ? layers
                        : std::max<int64_t>(first + 1,
                                            std::llround(acc / total * layers));
      end = std::min<int64_t>(end, layers - int64_t(p.stages.size() - 1 - i));
      p.stages[i].firstLayer = first;
      p.stages[i].lastLayer = end - 1;
      first = end;
    }
  }
  return plan;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: frenzy-plan-compare MODEL.onnx --seq=T "
                         "--global-batch=G CLUSTER.yaml... [--precision=P] "
                         "[--loss=cross-entropy]\n");
    return 1;
  }
  bench::BenchArgs args = bench::parseBenchArgs(argc, argv, 64);
  int64_t seq = args.seq, global = args.globalBatch;
  const std::string &precision = args.precision, &loss = args.loss;
  const std::vector<std::string> &clusters = args.rest;
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> m =
      bench::buildTrainingModule(argv[1], seq, loss, precision, &ctx);
  if (!m)
    return 1;
  auto memory = MemoryModel::build(*m, std::nullopt);
  auto cost = CostModel::build(*m, memory->precision());
  if (failed(memory) || failed(cost))
    return 1;
  PartitionOptions o;
  o.globalBatch = global;
  o.seq = seq;
  std::printf("%s, global batch %lld x %lld, %s; predicted tokens/s\n\n",
              argv[1], (long long)global, (long long)seq, precision.c_str());
  std::printf("| cluster | Frenzy | Frenzy, one type per pipeline | GPUs "
              "used | FlashFlex-style split | best homogeneous subset "
              "|\n|---|---|---|---|---|---|\n");
  for (const std::string &path : clusters) {
    auto c = readClusterFile(path);
    if (!c) {
      std::fprintf(stderr, "%s\n", llvm::toString(c.takeError()).c_str());
      return 1;
    }
    auto plan = partition(*cost, *memory, *c, o);
    if (!plan) {
      std::printf("| %s | %s | | | | |\n", path.c_str(),
                  llvm::toString(plan.takeError()).c_str());
      continue;
    }
    std::string flex = "does not fit";
    auto ff = evaluatePlan(*cost, *memory, *c, o,
                           proportional(*plan, *c, cost->numLayers()));
    if (ff)
      flex = llvm::formatv("{0:f0}", tokensPerSecond(*ff, o)).str();
    else
      llvm::consumeError(ff.takeError());
    std::string homo = "none fits";
    double bestHomo = 0;
    std::set<std::string> types;
    for (const ClusterNode &n : c->nodes)
      types.insert(n.gpu);
    for (const std::string &t : types) {
      ClusterSpec sub = *c;
      sub.nodes.clear();
      for (const ClusterNode &n : c->nodes)
        if (n.gpu == t)
          sub.nodes.push_back(n);
      auto hp = partition(*cost, *memory, sub, o);
      if (!hp) {
        llvm::consumeError(hp.takeError());
        continue;
      }
      double tps = tokensPerSecond(*hp, o);
      if (tps > bestHomo) {
        bestHomo = tps;
        homo = llvm::formatv("{0:f0} ({1})", tps, t).str();
      }
    }
    // The same search without mixed-type pipelines, and how many GPUs
    // the plan leaves idle (each with its reason in --emit=report).
    std::string single = "none fits";
    if (auto problem = buildPlanProblem(*cost, *memory, *c, o)) {
      plan::SolveOptions so;
      so.mixedPipelines = false;
      if (auto sp = plan::solveFast(*problem, so))
        single = llvm::formatv("{0:f0}", tokensPerSecond(*sp, o)).str();
      else
        llvm::consumeError(sp.takeError());
    } else {
      llvm::consumeError(problem.takeError());
    }
    int64_t used = 0;
    for (const Pipeline &p : plan->pipelines)
      for (const Stage &s : p.stages)
        used += s.tp();
    bool mixedUsed = false;
    for (const Pipeline &p : plan->pipelines)
      for (const Stage &s : p.stages)
        mixedUsed |= c->nodes[s.node].gpu != c->nodes[p.stages[0].node].gpu;
    std::printf("| %s | %.0f%s | %s | %lld of %lld | %s | %s |\n",
                path.c_str(), tokensPerSecond(*plan, o),
                mixedUsed ? " (mixed)" : "", single.c_str(), (long long)used,
                (long long)c->totalDevices(), flex.c_str(), homo.c_str());
  }
  return 0;
}
