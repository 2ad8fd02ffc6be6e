//===- PartitionAttrs.h - the partition decision as IR attributes -*- C++
//-*-===//
//
// frenzy-partition records its decision in the module and frenzy-pipeline-
// schedule records the schedule beside it, as the dialect's typed attributes
// (FrenzyLayoutAttrs.td, docs/partitioner.md):
//
//   module attributes {frenzy.layout = #frenzy.layout<mesh = <dp, pp, tp>,
//       cluster, ..., pipelines = [<micro_batches, sequences, stage_seconds,
//       stages = [<node, devices, layers, embed, head, seconds, ...>]>],
//       idle = [<node, devices, why>]>,
//     frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines =
//       [<micro_batches = 3, stages = [[F0 F1 B0 F2 B1 B2], ...]>]>}
//   every op of a block: frenzy.placement = #frenzy.placement<
//       pp = [its stage in each pipeline], tp = [that stage's TP degree]>
//
// This file converts them to and from the planner's plain data, which
// lib/Planning (free of MLIR) works on.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_PARTITIONATTRS_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_PARTITIONATTRS_H

#include "frenzy/Planning/Partitioner.h"
#include "frenzy/Planning/StagePrograms.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyDialect.h"

#include "mlir/IR/BuiltinOps.h"

namespace frenzy {

inline constexpr llvm::StringLiteral kLayoutAttrName =
    FrenzyDialect::kLayoutAttrName;
inline constexpr llvm::StringLiteral kScheduleAttrName =
    FrenzyDialect::kScheduleAttrName;
inline constexpr llvm::StringLiteral kPlacementAttrName =
    FrenzyDialect::kPlacementAttrName;
inline constexpr llvm::StringLiteral kAlternativesAttrName =
    "frenzy.partition_alternatives";

/// A partition as the IR records it: the plan and the options it was made
/// under (the cluster by path).
struct RecordedPartition {
  PartitionPlan plan;
  PartitionOptions options;
  std::string clusterPath;
};

/// Records `plan` on the module (frenzy.layout) and stamps every op of a
/// block with its placement: its stage and TP degree in each pipeline. With
/// the cluster, each stage also names its node's GPU type (for readers; the
/// node index is what counts). Fails, with the verifier's diagnostic, on a
/// plan the layout attributes refuse.
mlir::LogicalResult recordPartition(mlir::ModuleOp module, const RecordedPartition &rec,
                     const ClusterSpec *cluster = nullptr);

/// The partition the module records; nullopt (no diagnostic) when it has
/// none, failure when frenzy.layout is not a #frenzy.layout (its fields
/// were checked by its verifier when it was built or parsed).
mlir::FailureOr<std::optional<RecordedPartition>>
readPartition(mlir::ModuleOp module);

/// Records the schedule of every pipeline's stages of `plan`; fails, with
/// the verifier's diagnostic, on orders that do not run every micro-batch
/// forward, then backward, once.
mlir::LogicalResult recordSchedule(mlir::ModuleOp module, const ScheduleOrders &orders,
                    const PartitionPlan &plan);

/// The schedule the module records (its verifiers hold every stage to each
/// micro-batch's forward before its backward, each exactly once, and to
/// the layout's pipelines and stages); failure with a diagnostic when it
/// is missing or does not match `plan`.
mlir::FailureOr<ScheduleOrders> readSchedule(mlir::ModuleOp module,
                                             const PartitionPlan &plan);

/// Records the alternatives the search considered (--explain).
void recordAlternatives(mlir::ModuleOp module,
                        llvm::ArrayRef<Alternative> alternatives);
std::vector<Alternative> readAlternatives(mlir::ModuleOp module);

} // namespace frenzy

#endif
