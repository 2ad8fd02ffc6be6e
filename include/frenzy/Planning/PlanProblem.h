//===- PlanProblem.h - the partitioning problem as plain data ---*- C++ -*-===//
//
// The planner split in the CIRCT scheduling style: a PlanProblem (what the
// solvers may use: a model profile per block, a device profile per GPU type,
// the nodes, the network, the global batch), a solution (PartitionPlan:
// pipelines of stages with layer ranges and batch shares), check() for the
// input, verify() for a solution, and solvers that only read the problem.
// Nothing here includes or links MLIR: the partition pass fills a problem
// once from the IR (buildPlanProblem, Partitioner.h), and the multi-job
// scheduler or elastic re-planning can fill one from stored profiles.
// The cost and memory model over a problem is PlanCost (PlanCost.h); the
// solvers are solveFast (polynomial) and solveExhaustive (the test oracle).
// docs/partitioner.md documents the contract.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_PLANPROBLEM_H
#define FRENZY_PLANNING_PLANPROBLEM_H

#include "frenzy/Cluster/DeviceProfile.h"
#include "frenzy/Cluster/TopologySpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy {

//===-- The solution ------------------------------------------------------===//

struct Stage {
  int node = 0;                 // index into the problem's (cluster's) nodes
  std::vector<int64_t> devices; // device indices on that node
  int64_t firstLayer = 0, lastLayer = -1;
  bool embed = false, head = false;
  int64_t tp() const { return int64_t(devices.size()); }
  double seconds = 0;    // forward + backward of one micro-batch
  /// The parts of `seconds` the bubble analysis plays apart: the forward's
  /// compute, and one boundary tensor's transfer to the next stage
  /// (`seconds` holds two: activations forward, gradients back). 0: not
  /// known (a partition recorded before they were).
  double forwardSeconds = 0, transferSeconds = 0;
  int64_t peakBytes = 0; // per rank
  /// What one more micro-batch in flight adds to peakBytes (its saved
  /// activations, or under full recomputation its received hidden state):
  /// the bubble analysis' live memory between phases.
  int64_t activationBytes = 0;
  /// Full recomputation as frenzy-launch runs it: only what the stage
  /// received is kept between a micro-batch's forward and backward, and
  /// the backward runs the forward again (PlanProblem::fullRecompute).
  bool fullRecompute = false;
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

/// GPUs a plan leaves idle, and why (for the report).
struct IdleGpus {
  int node = 0;
  std::vector<int64_t> devices;
  std::string why;
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
  std::vector<IdleGpus> idle;
  /// The schedule whose memory the stages were checked under: GPipe when
  /// asked for (PlanProblem::gpipe) and every stage holds all of its
  /// pipeline's micro-batches; else 1F1B, and scheduleNote says why.
  bool gpipe = false;
  /// Its TP groups run Megatron sequence parallelism (what it was costed
  /// with: PlanProblem::sequenceParallel).
  bool sequenceParallel = false;
  std::string scheduleNote;
};
using PlanSolution = PartitionPlan;

//===-- The problem -------------------------------------------------------===//

namespace plan {

/// Activation bytes of a block at the reference micro-batch: the part
/// tensor parallelism divides, the part only sequence parallelism divides,
/// and the part nothing divides (MemoryModel's split).
struct MemoryParts {
  int64_t split = 0, layerOnly = 0, whole = 0;
  int64_t at(int64_t tp, bool sp) const {
    return (split + tp - 1) / tp + (sp ? (layerOnly + tp - 1) / tp : layerOnly) +
           whole;
  }
};

/// One block of the model: the embedding, a layer, or the head.
struct BlockProfile {
  int64_t params = 0;                   // trainable (gradients, optimizer)
  int64_t splitParams = 0, wholeParams = 0, buffers = 0; // memory
  MemoryParts saved, transient; // under the problem's recompute mode
};

struct ModelProfile {
  int64_t layers = 0;
  /// [0] the embedding, [1 .. layers] the layers, [layers + 1] the head.
  std::vector<BlockProfile> blocks;
  int64_t referenceBatch = 1;       // the memory parts' micro-batch
  int64_t ioBytes = 0;              // the head's inputs, at referenceBatch
  int64_t stateBytesPerParam = 16;  // weight, gradient, master, moments
  int64_t gradientBytesPerParam = 2;
  int64_t boundaryBytesPerSequence = 0; // the hidden state between layers
  double flopsPerSequence = 0;          // training FLOPs (report only)
  double fragmentation = 0.05;          // allocator slack, share of tensors
  static int64_t embedBlock() { return 0; }
  int64_t headBlock() const { return layers + 1; }
};

/// One GPU type as the solvers see it.
struct DeviceProfile {
  std::string name;
  int64_t memoryBytes = 0;
  double tensorTflops = 0, memoryGBs = 0;
  int64_t contextBytes = 0, commBufferBytes = 0;
  int64_t workspaceBytes = 0; // GpuType::workspaceBytes
  /// Seconds of forward + backward + update of one sequence per block
  /// (ModelProfile::blocks' order); a micro-batch of b takes b times that.
  std::vector<double> blockSeconds;
  /// The forward part of blockSeconds (what full recomputation repeats);
  /// empty: full recomputation is not offered on this type.
  std::vector<double> blockForwardSeconds;
  /// Why the type cannot run this step at all (empty: it can).
  std::string unusable;
};

struct Node {
  std::string name;
  int device = 0;     // index into PlanProblem::devices
  int64_t gpus = 0;
  double linkGBs = 0; // intra-node, GB/s
  /// A calibrated type's all-reduce on this node's link as the runtime runs
  /// it (frenzy-calibrate's rate by buffer bytes, plus one kernel's cost):
  /// TP collectives are priced as the predicted timeline prices them.
  /// Unset: linkGBs and the problem's collective latency.
  bool reduceMeasured = false;
  LinkProfile reduce;
  double reduceOverhead = 0; // seconds per collective kernel
};

struct PlanProblem {
  ModelProfile model;
  std::vector<DeviceProfile> devices;
  std::vector<Node> nodes; // the cluster file's order
  double networkGBs = 25.0 / 8; // inter-node, GB/s per node
  double networkLatency = 10e-6;
  /// Racks, zones, per-kind and per-pair links (the cluster file's
  /// topology: section); empty: every node pair uses the network figure.
  TopologySpec topology;
  /// Stages that use full recomputation: 0 none, 1 those that fit only
  /// with it, 2 every stage.
  int fullRecompute = 0;
  /// GPipe asked for: the plan's memory is checked with every micro-batch
  /// of a pipeline in flight (PartitionPlan::gpipe says if it held).
  bool gpipe = false;
  /// Sequence parallelism in TP groups (--sequence-parallel): their
  /// token-wise activations are sharded (PlanCost), as the program runs.
  bool sequenceParallel = false;
  double networkEfficiency = 0.8, memoryEfficiency = 0.7;
  double collectiveLatency = 10e-6; // one collective inside a node
  int64_t globalBatch = 8;
  std::vector<int64_t> microBatches = {1, 2, 4, 8};
  std::vector<int64_t> tpDegrees = {1, 2, 4, 8};

  /// The input is well formed: blocks and device profiles agree, every
  /// node names a device, counts and bandwidths are positive, the global
  /// batch is positive. The error names the field.
  llvm::Error check() const;
  int64_t totalGpus() const;
};

/// A solution is valid: every GPU used at most once and exists, every
/// pipeline covers the layers exactly once in order (embedding first, head
/// last), stages fit in memory, batch shares sum to the global batch.
llvm::Error verify(const PlanProblem &problem, const PartitionPlan &plan);

struct SolveOptions {
  /// Fill with the alternatives the search ranked (fastest first).
  std::vector<std::pair<std::string, double>> *explain = nullptr;
  /// Pipelines whose stages are on different GPU types (off: only for
  /// comparisons, bench/plan_compare.sh).
  bool mixedPipelines = true;
  /// Fill with up to `keepCandidates` scored plans of distinct
  /// descriptions, fastest first (the chosen one among them): the driver
  /// re-scores them with the predicted timeline (docs/calibration.md).
  std::vector<PartitionPlan> *candidates = nullptr;
  size_t keepCandidates = 0;
};

/// The polynomial search (docs/partitioner.md): per GPU type and TP degree
/// homogeneous pipelines of several depths, mixed-type pipelines of two
/// types, batch shares by water-filling, pipelines assigned by coordinate
/// descent over per-type choices, the best few re-scored exactly; then a
/// reason for every idle GPU. Deterministic.
llvm::Expected<PartitionPlan> solveFast(const PlanProblem &problem,
                                        const SolveOptions &options = {});

/// Every multiset of pipelines (each a sequence of stage groups in
/// non-increasing memory order, any type, any TP, its layers split to
/// minimise the bottleneck) that the cluster can hold, scored exactly.
/// Exponential: for clusters of a few GPUs, as the fast solver's oracle.
llvm::Expected<PartitionPlan> solveExhaustive(const PlanProblem &problem);

/// Scores a plan given as pipelines of stages: stage times and memory,
/// water-filled batch shares (unless fixedShares), all-reduce and optimizer
/// time. An error when a stage does not fit.
llvm::Expected<PartitionPlan> scorePlan(const PlanProblem &problem,
                                        PartitionPlan plan);

} // namespace plan
} // namespace frenzy

#endif
