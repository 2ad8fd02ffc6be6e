//===- PartitionAttrs.h - the partition decision as IR attributes -*- C++
//-*-===//
//
// frenzy-partition records its decision in the module and frenzy-pipeline-
// schedule records the schedule beside it; the plan writer reads both back.
// This is the one place that knows the attribute layout, so writer and
// passes cannot drift apart:
//
//   module attributes {frenzy.partition = {cluster, global_batch, seq,
//       recompute, micro_batch, fixed_shares, step/pipeline/all_reduce/
//       optimizer seconds, description,
//       pipelines = [{micro_batches, sequences, stage_seconds,
//                     stages = [{node, gpu, devices, layers, tp, embed,
//                                head, seconds, peak_bytes, activation_bytes}]}],
//       idle = [{node, devices, why}]},
//     frenzy.schedule = {kind = "1f1b", pipelines = [["F0 F1 B0 ...", ...]]}}
//   every op of a block: frenzy.stage = array<i64: stage in pipeline 0, ...>,
//                        frenzy.tp = array<i64: that stage's TP degree, ...>
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_PARTITIONATTRS_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_PARTITIONATTRS_H

#include "frenzy/Planning/Partitioner.h"
#include "frenzy/Planning/StagePrograms.h"

#include "mlir/IR/BuiltinOps.h"

namespace frenzy {

inline constexpr llvm::StringLiteral kPartitionAttrName = "frenzy.partition";
inline constexpr llvm::StringLiteral kScheduleAttrName = "frenzy.schedule";
inline constexpr llvm::StringLiteral kAlternativesAttrName =
    "frenzy.partition_alternatives";
inline constexpr llvm::StringLiteral kStageAttrName = "frenzy.stage";
inline constexpr llvm::StringLiteral kTpAttrName = "frenzy.tp";

/// A partition as the IR records it: the plan and the options it was made
/// under (the cluster by path).
struct RecordedPartition {
  PartitionPlan plan;
  PartitionOptions options;
  std::string clusterPath;
};

/// Records `plan` on the module and stamps every op of a block with its
/// stage and TP degree in each pipeline. With the cluster, each stage also
/// names its node's GPU type (for readers; the node index is what counts).
void recordPartition(mlir::ModuleOp module, const RecordedPartition &rec,
                     const ClusterSpec *cluster = nullptr);

/// The partition the module records; nullopt (no diagnostic) when it has
/// none, failure (with a diagnostic naming the field) when malformed.
mlir::FailureOr<std::optional<RecordedPartition>>
readPartition(mlir::ModuleOp module);

/// Records the schedule of every pipeline's stages.
void recordSchedule(mlir::ModuleOp module, const ScheduleOrders &orders);

/// The schedule the module records, checked against the partition (one
/// order per stage, every micro-batch's forward before its backward, each
/// exactly once); failure with a diagnostic otherwise.
mlir::FailureOr<ScheduleOrders> readSchedule(mlir::ModuleOp module,
                                             const PartitionPlan &plan);

/// Records the alternatives the search considered (--explain).
void recordAlternatives(mlir::ModuleOp module,
                        llvm::ArrayRef<Alternative> alternatives);
std::vector<Alternative> readAlternatives(mlir::ModuleOp module);

} // namespace frenzy

#endif
