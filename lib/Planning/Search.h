//===- Search.h - the partitioner's internal search state ------*- C++ -*-===//
//
// Shared by Partitioner.cpp (candidate shapes and the search) and
// PlanScoring.cpp (stage times, memory, batch shares, step time). Not part of
// the public API (include/frenzy/Planning/Partitioner.h).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_PLANNING_SEARCH_H
#define FRENZY_LIB_PLANNING_SEARCH_H

#include "frenzy/Cluster/Topology.h"
#include "frenzy/Planning/Partitioner.h"

#include <map>
#include <optional>
#include <set>

namespace frenzy::planning {

struct TypeGroup {
  const GpuType *gpu = nullptr;
  std::vector<int> nodes; // cluster node indices, rack by rack (placement)
  int64_t minPerNode = INT64_MAX, maxPerNode = 0;
  int64_t smallestNeed = INT64_MAX; // for the error when nothing fits
  bool unsupported = false;         // no bf16 for a bf16-mixed step
};

/// One pipeline shape of a type: stages (layer ranges), bottleneck time.
struct Template {
  int64_t tp = 1, depth = 1, pipelines = 0;
  std::vector<int> stageType; // index into the type groups, per stage
  bool spansNodes = false;
  std::vector<std::pair<int64_t, int64_t>> ranges; // per stage
  std::vector<double> stageSeconds;
  std::vector<int64_t> stagePeak;
  std::vector<Recompute> stageRecompute;
  double bottleneck = 0;
  int64_t paramsPerRank = 0; // the largest stage's, after TP
};

class Search {
public:
  Search(const CostModel &c, const MemoryModel &m, const ClusterSpec &cl,
         const PartitionOptions &o)
      : cost(c), memory(m), cluster(cl), opts(o), topology(cl),
        spanLink(topology.fastestBetween(allNodes(cl))) {}

  llvm::Expected<PartitionPlan> run(std::vector<Alternative> *explain);

private:
  /// `next`: the link to the next stage when placement is known; else the
  /// fastest inter-node link when the pipeline spans nodes (optimistic, as
  /// templates are: the exact evaluation sees the real link).
  /// `r`: the stage's recompute mode (full adds a forward of its layers).
  double stageSeconds(const TypeGroup &g, int64_t tp, int64_t first,
                      int64_t last, bool embed, bool head, int64_t mb,
                      bool spansNodes, const Link *next = nullptr,
                      Recompute r = Recompute::Selective) const;
  /// Per-rank peak of stage `stage` of `depth` under mode `r`, holding
  /// `inFlight` micro-batches (0: 1F1B's depth - stage).
  int64_t stagePeak(const TypeGroup &g, int64_t tp, int64_t first,
                    int64_t last, int64_t stage, int64_t depth, int64_t mb,
                    Recompute r, int64_t inFlight = 0) const;
  /// The options' recompute mode, or full where --recompute=auto and only
  /// full recomputation fits the stage.
  Recompute stageMode(const TypeGroup &g, int64_t tp, int64_t first,
                      int64_t last, int64_t stage, int64_t depth, int64_t mb,
                      int64_t inFlight = 0) const;
  /// GPipe asked for: re-checks the stages with all micro-batches in
  /// flight, keeping GPipe or noting why 1F1B is used.
  void checkGpipe(PartitionPlan &plan) const;
  std::optional<Template> shape(std::vector<TypeGroup> &groups,
                                std::vector<int> stageType, int64_t tp,
                                int64_t pipelines, bool spans,
                                int64_t mb) const;
  PartitionPlan assemble(const std::vector<TypeGroup> &groups,
                         const std::vector<const Template *> &chosen,
                         int64_t mb) const;
  /// The step time assemble() would give, without building the stages:
  /// the search ranks hundreds of thousands of combinations this way.
  double quickSeconds(const std::vector<TypeGroup> &groups,
                      const std::vector<const Template *> &chosen,
                      int64_t mb) const;
  /// Water-filled batch shares, all-reduce and optimizer time of a plan
  /// whose stages have their seconds.
  void finish(PartitionPlan &plan) const;
  void waterFill(PartitionPlan &plan) const;
  void allReduceAndOptimizer(PartitionPlan &plan) const;
  int64_t stageParams(const Stage &st) const;

public:
  /// Stage times, memory and the step time of a plan given as stages.
  llvm::Expected<PartitionPlan> evaluate(PartitionPlan plan) const;

private:
  /// Ring all-reduce of one rank's gradients between pipelines over the
  /// slowest link (the network when they span nodes).
  double allReduceSeconds(int64_t pipelines, int64_t params,
                          const std::set<int> &nodes) const;
  int64_t groupsOf(const TypeGroup &g, int64_t tp) const {
    int64_t n = 0;
    for (int node : g.nodes)
      n += cluster.nodes[node].count / tp;
    return n;
  }

  /// Prefix sums of the layers' seconds at micro-batch 1 on a GPU type:
  /// a stage's compute time in O(1) (times scale with the micro-batch).
  /// `forwardOnly`: the forward parts (what full recomputation repeats).
  const std::vector<double> &layerPrefix(const GpuType &gpu,
                                         bool forwardOnly = false) const {
    std::vector<double> &p = prefix[{&gpu, forwardOnly}];
    if (p.empty()) {
      p.push_back(0);
      for (int64_t l = 0; l < std::max<int64_t>(1, cost.numLayers()); ++l)
        p.push_back(p.back() + (forwardOnly
                                    ? cost.blockForwardSeconds(l, gpu, 1)
                                    : cost.blockSeconds(l, gpu, 1)));
    }
    return p;
  }

  static std::vector<int> allNodes(const ClusterSpec &cl) {
    std::vector<int> n(cl.nodes.size());
    for (size_t i = 0; i < n.size(); ++i)
      n[i] = int(i);
    return n;
  }

  const CostModel &cost;
  const MemoryModel &memory;
  const ClusterSpec &cluster;
  const PartitionOptions &opts;
  Topology topology;
  Link spanLink; // the fastest link between two nodes of the cluster
  mutable std::map<std::pair<const GpuType *, bool>, std::vector<double>>
      prefix;
};

} // namespace frenzy::planning

#endif
