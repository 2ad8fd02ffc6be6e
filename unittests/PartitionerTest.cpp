//===- PartitionerTest.cpp - the search against exhaustive enumeration ----===//
//
// On 20 generated clusters of at most 16 GPUs and 2-3 GPU types, the
// partitioner's plan must be within 2% of the best plan found by
// enumerating the same plan space exhaustively here: every micro-batch
// size, every TP degree and every pipeline depth per type (or leaving the
// type out), every contiguous layer split per pipeline shape, every
// combination across types, all scored by evaluatePlan (the search's own
// scoring). Plus mixed pipelines, which the enumeration covers as well.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/InitAll.h"
#include "frenzy/Planning/Partitioner.h"

#include "GptLayers.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <random>

using namespace mlir;
using namespace frenzy;

namespace {

constexpr int64_t kLayers = 6;

/// All ways to cut [0, L) into `parts` non-empty contiguous ranges.
void splits(int64_t L, int64_t parts, std::vector<int64_t> &cut,
            std::vector<std::vector<std::pair<int64_t, int64_t>>> &out) {
  if (int64_t(cut.size()) == parts - 1) {
    std::vector<std::pair<int64_t, int64_t>> r;
    int64_t a = 0;
    for (int64_t c : cut) {
      r.push_back({a, c - 1});
      a = c;
    }
    r.push_back({a, L - 1});
    out.push_back(r);
    return;
  }
  for (int64_t c = cut.empty() ? 1 : cut.back() + 1;
       c <= L - (parts - 1 - int64_t(cut.size())); ++c) {
    cut.push_back(c);
    splits(L, parts, cut, out);
    cut.pop_back();
  }
}

struct Shape {
  int64_t tp, depth;
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

class Enumerator {
public:
  Enumerator(const CostModel &c, const MemoryModel &m, const ClusterSpec &cl,
             const PartitionOptions &o)
      : cost(c), memory(m), cluster(cl), opts(o) {}

  /// Stage groups of the nodes of `type`, node by node.
  std::vector<std::pair<int, std::vector<int64_t>>>
  stageGroups(const std::string &type, int64_t tp) const {
    std::vector<std::pair<int, std::vector<int64_t>>> g;
    for (size_t n = 0; n < cluster.nodes.size(); ++n)
      if (cluster.nodes[n].gpu == type)
        for (int64_t d = 0; d + tp <= cluster.nodes[n].count; d += tp) {
          std::vector<int64_t> devs;
          for (int64_t i = 0; i < tp; ++i)
            devs.push_back(d + i);
          g.push_back({int(n), devs});
        }
    return g;
  }

  void addPipelines(PartitionPlan &plan, const std::string &type,
                    const Shape &s) const {
    auto groups = stageGroups(type, s.tp);
    for (size_t p = 0; p + s.depth <= groups.size(); p += s.depth) {
      Pipeline pipe;
      for (int64_t k = 0; k < s.depth; ++k) {
        Stage st;
        st.node = groups[p + k].first;
        st.devices = groups[p + k].second;
        st.firstLayer = s.ranges[k].first;
        st.lastLayer = s.ranges[k].second;
        st.embed = k == 0;
        st.head = k == s.depth - 1;
        pipe.stages.push_back(st);
      }
      plan.pipelines.push_back(pipe);
    }
  }

  double score(const PartitionPlan &plan) const {
    auto r = evaluatePlan(cost, memory, cluster, opts, plan);
    if (!r) {
      llvm::consumeError(r.takeError());
      return 1e30;
    }
    return r->stepSeconds();
  }

  /// The best step time over the whole space.
  double best() const {
    std::vector<std::string> types;
    for (const ClusterNode &n : cluster.nodes)
      if (std::find(types.begin(), types.end(), n.gpu) == types.end())
        types.push_back(n.gpu);
    double bestTime = 1e30;
    for (int64_t mb : {1, 2, 4, 8}) {
      if (opts.globalBatch % mb)
        continue;
      // Per type: the best split of every (tp, depth), scored alone.
      std::vector<std::vector<Shape>> options(types.size());
      for (size_t k = 0; k < types.size(); ++k)
        for (int64_t tp : {1, 2, 4, 8}) {
          bool ok = true;
          for (const ClusterNode &n : cluster.nodes)
            if (n.gpu == types[k])
              ok &= n.count % tp == 0;
          if (!ok)
            continue;
          int64_t groups = int64_t(stageGroups(types[k], tp).size());
          for (int64_t d = 1; d <= std::min(groups, kLayers); ++d) {
            std::vector<std::vector<std::pair<int64_t, int64_t>>> all;
            std::vector<int64_t> cut;
            splits(kLayers, d, cut, all);
            double shapeBest = 1e30;
            Shape chosen{tp, d, {}};
            for (auto &r : all) {
              PartitionPlan one;
              one.microBatch = mb;
              addPipelines(one, types[k], Shape{tp, d, r});
              double t = score(one);
              if (t < shapeBest) {
                shapeBest = t;
                chosen.ranges = r;
              }
            }
            if (shapeBest < 1e30)
              options[k].push_back(chosen);
          }
        }
      // Every combination across types.
      std::vector<size_t> pick(types.size(), 0);
      while (true) {
        PartitionPlan plan;
        plan.microBatch = mb;
        for (size_t k = 0; k < types.size(); ++k)
          if (pick[k])
            addPipelines(plan, types[k], options[k][pick[k] - 1]);
        if (!plan.pipelines.empty())
          bestTime = std::min(bestTime, score(plan));
        size_t k = 0;
        while (k < types.size() && ++pick[k] > options[k].size())
          pick[k++] = 0;
        if (k == types.size())
          break;
      }
    }
    return bestTime;
  }

private:
  const CostModel &cost;
  const MemoryModel &memory;
  const ClusterSpec &cluster;
  const PartitionOptions &opts;
};

ClusterSpec makeCluster(unsigned seed) {
  const char *types[] = {"A100-80G", "A100-40G", "RTX3090", "V100-32G",
                         "L4",       "RTX4090",  "H100-PCIe", "T4"};
  std::mt19937 rng(seed);
  ClusterSpec c;
  c.network.bandwidthGbps = rng() % 2 ? 25 : 100;
  int ntypes = 2 + int(rng() % 2);
  std::vector<std::string> chosen;
  while (int(chosen.size()) < ntypes) {
    std::string t = types[rng() % 8];
    if (std::find(chosen.begin(), chosen.end(), t) == chosen.end())
      chosen.push_back(t);
  }
  int64_t total = 0;
  for (const std::string &t : chosen) {
    int nodes = 1 + int(rng() % 2);
    for (int i = 0; i < nodes && total < 16; ++i) {
      int64_t count = int64_t(1) << (rng() % 3); // 1, 2, 4
      count = std::min<int64_t>(count, 16 - total);
      ClusterNode n;
      n.name = t + "-" + std::to_string(i);
      n.gpu = t;
      n.count = count;
      n.link = rng() % 2 ? "nvlink" : "pcie";
      c.nodes.push_back(n);
      total += count;
    }
  }
  return c;
}

/// The 6-layer GPT's training step and its memory and cost models.
class Partitioner : public ::testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    m = parseSourceString<ModuleOp>(
        testmodels::gptLayers(512, 512, 8, kLayers), ctx.get());
    ASSERT_TRUE(m);
    PassManager pm(ctx.get());
    pm.addPass(createFrenzyAutodiff());
    pm.addPass(createFrenzyOptimizer());
    ASSERT_TRUE(succeeded(pm.run(*m)));
    auto mm = MemoryModel::build(*m, Precision::FP16Mixed);
    auto cm = CostModel::build(*m, Precision::FP16Mixed);
    ASSERT_TRUE(succeeded(mm) && succeeded(cm));
    memory = *mm;
    cost = *cm;
  }
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> m;
  std::optional<MemoryModel> memory;
  std::optional<CostModel> cost;
};

} // namespace

TEST_F(Partitioner, WithinTwoPercentOfExhaustiveEnumeration) {
  PartitionOptions o;
  o.globalBatch = 32;
  o.seq = 512;
  double worst = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    ClusterSpec cluster = makeCluster(seed);
    auto plan = partition(*cost, *memory, cluster, o);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    double found = plan->stepSeconds();
    double best = Enumerator(*cost, *memory, cluster, o).best();
    double gap = found / best - 1.0;
    worst = std::max(worst, gap);
    EXPECT_LE(gap, 0.02) << "cluster " << seed << ": search " << found
                         << " s, enumeration " << best << " s";
  }
  std::printf("worst gap to exhaustive enumeration over 20 clusters: %.3f%%\n",
              100.0 * worst);
}

TEST_F(Partitioner, FasterTypesGetMoreOfTheBatch) {
  ClusterSpec c;
  for (const char *t : {"H100-PCIe", "T4"}) {
    ClusterNode n;
    n.name = t;
    n.gpu = t;
    n.count = 2;
    c.nodes.push_back(n);
  }
  PartitionOptions o;
  o.globalBatch = 64;
  o.seq = 512;
  auto plan = partition(*cost, *memory, c, o);
  ASSERT_TRUE(bool(plan));
  int64_t h100 = 0, t4 = 0, total = 0;
  for (const Pipeline &p : plan->pipelines) {
    total += p.microBatches * plan->microBatch;
    (c.nodes[p.stages[0].node].gpu == "T4" ? t4 : h100) +=
        p.microBatches * plan->microBatch;
  }
  EXPECT_EQ(total, 64); // the global batch, exactly
  EXPECT_GT(h100, t4);
}
