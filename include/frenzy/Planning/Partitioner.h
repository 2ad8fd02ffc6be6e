//===- Partitioner.h - asymmetric DP/PP/TP over a mixed cluster -*- C++ -*-===//
//
// A plan is a set of pipelines (data-parallel replicas) of possibly
// different shapes. Each stage is a group of GPUs on one node running the
// stage's contiguous layer range with tensor parallelism over the group;
// each pipeline gets a number of micro-batches so that all finish together
// and the global batch is kept exactly. The search is deterministic:
// per GPU type a TP degree and a pipeline depth (or leaving the type out),
// an optimal contiguous layer split per pipeline (binary search on the
// bottleneck stage time, memory-checked by the memory model), and a
// water-filling share of micro-batches. The objective is the predicted
// iteration time.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_PARTITIONER_H
#define FRENZY_PLANNING_PARTITIONER_H

#include "frenzy/Analysis/Memory/MemoryModel.h"
#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Planning/CostModel.h"

#include "llvm/Support/raw_ostream.h"

namespace frenzy {

struct Stage {
  int node = 0;                 // index into ClusterSpec::nodes
  std::vector<int64_t> devices; // device indices on that node
  int64_t firstLayer = 0, lastLayer = -1;
  bool embed = false, head = false;
  int64_t tp() const { return int64_t(devices.size()); }
  double seconds = 0;    // forward + backward of one micro-batch
  int64_t peakBytes = 0; // per rank
  /// Activation recomputation of this stage (PartitionOptions).
  Recompute recompute = Recompute::Selective;
};

struct Pipeline {
  std::vector<Stage> stages;
  int64_t microBatches = 0;
  double stageSeconds = 0; // the bottleneck stage
  double seconds() const {
    return microBatches ? double(microBatches + stages.size() - 1) *
                              stageSeconds
                        : 0;
  }
};

struct PartitionPlan {
  std::vector<Pipeline> pipelines;
  int64_t microBatch = 1;
  /// The pipelines' micro-batch counts are given (a pinned --layout), not
  /// water-filled by scoring.
  bool fixedShares = false;
  double pipelineSeconds = 0, allReduceSeconds = 0, optimizerSeconds = 0;
  double stepSeconds() const {
    return pipelineSeconds + allReduceSeconds + optimizerSeconds;
  }
  std::string description; // the choice that produced it, for --explain
  /// The pipeline schedule whose memory the stages were checked under:
  /// GPipe when asked for and every stage holds all its micro-batches;
  /// else 1F1B, and `scheduleNote` says why GPipe was not kept.
  bool gpipe = false;
  std::string scheduleNote;
};

struct PartitionOptions {
  int64_t globalBatch = 8;
  int64_t seq = 1024;
  Recompute recompute = Recompute::Selective;
  /// Per stage: a stage that does not fit under `recompute` may use full
  /// recomputation instead, charged one more forward of its layers.
  bool recomputeAuto = false;
  /// GPipe asked for: its memory (every micro-batch of a pipeline in flight
  /// on every stage, not 1F1B's depth - stage) is checked on the plan.
  bool gpipe = false;
};

struct Alternative {
  std::string description;
  double stepSeconds = 0; // 0 when infeasible
  std::string why;        // why it lost (or is infeasible)
};

/// The best plan, or an error saying what is missing (memory per GPU, a
/// global batch that cannot be split).
llvm::Expected<PartitionPlan>
partition(const CostModel &cost, const MemoryModel &memory,
          const ClusterSpec &cluster, const PartitionOptions &options,
          std::vector<Alternative> *explain = nullptr);

/// Scores a plan given as pipelines of stages (node, devices, layers,
/// embed/head) and a micro-batch size: stage times and memory, water-filled
/// batch shares, all-reduce and optimizer time. An error when a stage does
/// not fit. The search scores its candidates the same way; tests use this to
/// score exhaustively enumerated plans and baselines.
llvm::Expected<PartitionPlan>
evaluatePlan(const CostModel &cost, const MemoryModel &memory,
             const ClusterSpec &cluster, const PartitionOptions &options,
             const PartitionPlan &plan);

/// The human table: pipelines, stages, GPUs, layers, TP, memory per rank,
/// step time, tokens/s, MFU against the cluster's peak.
void printPlanReport(const PartitionPlan &plan, const ClusterSpec &cluster,
                     const CostModel &cost, const PartitionOptions &o,
                     llvm::raw_ostream &os);
void printPlanJson(const PartitionPlan &plan, const ClusterSpec &cluster,
                   const CostModel &cost, const PartitionOptions &o,
                   llvm::raw_ostream &os);

} // namespace frenzy

#endif
