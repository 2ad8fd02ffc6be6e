//===- Partitioner.h - asymmetric DP/PP/TP over a mixed cluster -*- C++ -*-===//
//
// A plan is a set of pipelines (data-parallel replicas) of possibly
// different shapes and GPU types (PlanProblem.h). This is the MLIR side:
// buildPlanProblem() extracts the plain-data problem from the cost and
// memory models once; partition() runs the fast solver on it and
// evaluatePlan() scores a given plan, both through the MLIR-free library
// (lib/Planning/Problem). The objective is the predicted step time.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_PARTITIONER_H
#define FRENZY_PLANNING_PARTITIONER_H

#include "frenzy/Analysis/Memory/MemoryModel.h"
#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Planning/CostModel.h"
#include "frenzy/Planning/PlanProblem.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

namespace frenzy {

struct PartitionOptions {
  int64_t globalBatch = 8;
  int64_t seq = 1024;
  Recompute recompute = Recompute::Selective;
  /// Full recomputation (frenzy-launch's, per stage): 0 never, 1 on the
  /// stages that fit only with it (--recompute=auto), 2 on every stage.
  int fullRecompute = 0;
  /// GPipe asked for: its memory is checked on the plan.
  bool gpipe = false;
  /// Megatron sequence parallelism in every TP group (--sequence-parallel),
  /// or, with sequenceParallelAuto, where every TP degree offered divides
  /// the sequence (the search's choice: SP moves the bytes TP's all-reduce
  /// does and shards the token-wise activations, so it never costs time in
  /// the model and saves memory).
  bool sequenceParallel = false, sequenceParallelAuto = false;
  /// TP degrees the model cannot be split for, with the reason
  /// (frenzy-tp-check): never offered, and a given plan using one is
  /// refused.
  std::map<int64_t, std::string> tpRefused;
};

/// Sets recompute and fullRecompute from a --recompute value: auto
/// (selective, full where only it fits), none, selective or full (every
/// stage); false for anything else.
bool setRecompute(PartitionOptions &o, llvm::StringRef mode);

struct Alternative {
  std::string description;
  double stepSeconds = 0; // 0 when infeasible
  std::string why;        // why it lost (or is infeasible)
};

/// The plain-data problem: per-block times on every GPU type of the
/// cluster, per-block parameters and activation memory, nodes, network,
/// global batch. Errors: an unknown GPU type.
llvm::Expected<plan::PlanProblem>
buildPlanProblem(const CostModel &cost, const MemoryModel &memory,
                 const ClusterSpec &cluster, const PartitionOptions &options);

/// The best plan, or an error saying what is missing (memory per GPU, a
/// global batch that cannot be split).
/// `candidates`, when given, gets up to `keep` of the best-scored plans
/// (distinct shapes, fastest first, the chosen one among them).
llvm::Expected<PartitionPlan>
partition(const CostModel &cost, const MemoryModel &memory,
          const ClusterSpec &cluster, const PartitionOptions &options,
          std::vector<Alternative> *explain = nullptr,
          std::vector<PartitionPlan> *candidates = nullptr, size_t keep = 0);

/// Scores a plan given as pipelines of stages (node, devices, layers,
/// embed/head) and a micro-batch size: stage times and memory, water-filled
/// batch shares, all-reduce and optimizer time. An error when a stage does
/// not fit, or a stage's TP degree is one the model cannot be split for.
/// The search scores its candidates the same way; tests use this to score
/// exhaustively enumerated plans and baselines.
llvm::Expected<PartitionPlan>
evaluatePlan(const CostModel &cost, const MemoryModel &memory,
             const ClusterSpec &cluster, const PartitionOptions &options,
             const PartitionPlan &plan);

/// The human table: pipelines, stages, GPUs, layers, TP, memory per rank,
/// step time, tokens/s, MFU against the cluster's peak.
/// `timeline`, when given: the predicted timeline's figures for the plan
/// as written (the step the report then prints and the planner chose by).
struct TimelineScore {
  double stepSeconds = 0; // the plan's predicted timeline step
  /// The search's best shapes re-scored with the timeline, as --layout
  /// specs, fastest first (empty for a pinned --layout).
  std::vector<std::pair<std::string, double>> candidates;
};
void printPlanReport(const PartitionPlan &plan, const ClusterSpec &cluster,
                     const CostModel &cost, const PartitionOptions &o,
                     llvm::raw_ostream &os,
                     const TimelineScore *timeline = nullptr);
void printPlanJson(const PartitionPlan &plan, const ClusterSpec &cluster,
                   const CostModel &cost, const PartitionOptions &o,
                   llvm::raw_ostream &os,
                   const TimelineScore *timeline = nullptr);

} // namespace frenzy

#endif
