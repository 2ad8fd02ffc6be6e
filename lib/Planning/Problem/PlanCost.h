//===- PlanCost.h - time and memory of stages and plans of a problem -----===//
//
// The cost and memory model the solvers share, over a PlanProblem only:
// stage compute and communication time, per-rank stage memory (the memory
// model's arithmetic on the problem's per-block parts, O(1) per query from
// prefix sums and range-maximum tables), 1F1B pipeline time, water-filled
// batch shares, the gradient all-reduce and the optimizer step. Kept apart
// from the solvers so an exhaustive solver scores exactly like the fast
// one. Internal to lib/Planning/Problem.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_PLANNING_PROBLEM_PLANCOST_H
#define FRENZY_LIB_PLANNING_PROBLEM_PLANCOST_H

#include "frenzy/Cluster/Topology.h"
#include "frenzy/Planning/PlanProblem.h"
#include "frenzy/Support/RangeMax.h"

#include <map>
#include <set>

namespace frenzy::plan {

class PlanCost {
public:
  explicit PlanCost(const PlanProblem &p);

  const PlanProblem &problem() const { return p; }
  int64_t layers() const { return p.model.layers; }

  /// One micro-batch of `mb` sequences, forward and backward, through
  /// layers [first, last] (and the embedding/head) with TP over `tp` GPUs
  /// of `device` on `node` (its link carries the TP collectives), plus the
  /// stage-boundary transfers (over the network when the pipeline spans
  /// nodes).
  /// `next`: the link to the next stage's node when placement is known
  /// (else the cluster's fastest inter-node link when the pipeline spans
  /// nodes: optimistic, the exact score sees the real link). `full`: full
  /// recomputation, one more forward of the stage's blocks.
  /// `parts`, when given, gets the forward's share and one boundary
  /// transfer (the bubble analysis plays them apart, SideTaskAttrs.cpp).
  struct StageParts {
    double forward = 0;  // the forward compute of one micro-batch
    double transfer = 0; // one boundary tensor to the next stage
  };
  double stageSeconds(int device, int node, int64_t tp, int64_t first,
                      int64_t last, bool embed, bool head, int64_t mb,
                      bool spansNodes, const Link *next = nullptr,
                      bool full = false, StageParts *parts = nullptr) const;
  /// Per-rank peak bytes of that stage holding `inFlight` micro-batches'
  /// activations (1F1B: depth - stage); under `full` recomputation one
  /// micro-batch's activations and the others' received hidden states.
  int64_t stagePeak(int device, int64_t tp, int64_t first, int64_t last,
                    bool embed, bool head, int64_t inFlight, int64_t mb,
                    bool full = false) const;
  /// Whether the stage uses full recomputation (PlanProblem::fullRecompute:
  /// always, or where only it fits).
  bool useFull(int device, int64_t tp, int64_t first, int64_t last,
               bool embed, bool head, int64_t inFlight, int64_t mb) const;
  const Topology &topology() const { return topo; }
  /// Trainable parameters one rank of the stage holds.
  int64_t stageParams(int64_t tp, int64_t first, int64_t last, bool embed,
                      bool head) const;
  /// Ring all-reduce of one rank's gradients between `pipelines` pipelines:
  /// when they span nodes, the exact score's all-reduce through every node
  /// (an estimate for the search: which nodes is not known yet), else over
  /// `node`'s link.
  double allReduceSeconds(int64_t pipelines, int64_t params, bool crossNodes,
                          int node) const;
  /// The same through the nodes the pipelines use (the exact score).
  double allReduceSeconds(int64_t pipelines, int64_t params,
                          llvm::ArrayRef<int> nodes) const;
  /// 32 bytes per parameter through the slowest used GPU's memory.
  double optimizerSeconds(int64_t params, double slowestMemGBs) const;

  /// Stage times and memory (from the stages' placement), batch shares,
  /// all-reduce and optimizer: the exact score of a plan.
  llvm::Expected<PartitionPlan> score(PartitionPlan plan) const;

  /// Micro-batches a 1F1B pipeline of `depth` stages of `stage` seconds
  /// finishes within T.
  static int64_t microBatchesWithin(double T, double stage, int64_t depth);

private:
  void waterFill(PartitionPlan &plan) const;
  void allReduceAndOptimizer(PartitionPlan &plan) const;
  /// GPipe asked for: the stages re-checked with all micro-batches in
  /// flight; keeps GPipe or notes why 1F1B is used.
  void checkGpipe(PartitionPlan &plan) const;

  /// Per TP degree: prefix sums over layers of the activation parts and
  /// a sparse table of the transient maxima.
  struct LayerTable {
    std::vector<int64_t> saved;
    RangeMax transientMax;
  };
  const LayerTable &table(int64_t tp) const;

  const PlanProblem &p;
  Topology topo;
  Link spanLink; // the fastest inter-node link
  std::vector<std::vector<double>> prefix; // per device, layer seconds
  std::vector<std::vector<double>> forwardPrefix; // their forward parts
  std::vector<int64_t> splitParams, wholeParams, buffers, params; // prefixes
  mutable std::map<int64_t, LayerTable> tables;
};

/// The links of a problem's nodes (its network figure and topology).
Topology problemTopology(const PlanProblem &p);

/// Micro-batch sizes of the problem that divide its global batch.
std::vector<int64_t> usableMicroBatches(const PlanProblem &p);

} // namespace frenzy::plan

#endif
