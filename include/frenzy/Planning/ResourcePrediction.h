//===- ResourcePrediction.h - how many GPUs of which type -------*- C++ -*-===//
//
// For each GPU type of a cluster: the smallest number of GPUs of that type
// on which some layout (TP x PP x DP, micro-batch, ZeRO stage, recompute)
// fits in memory, and the layouts that fit there. Until the cost model
// exists layouts are ranked by GPU count, then by how little they give up
// (less recomputation, lower ZeRO stage, larger micro-batch).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_RESOURCEPREDICTION_H
#define FRENZY_PLANNING_RESOURCEPREDICTION_H

#include "frenzy/Analysis/Memory/MemoryModel.h"
#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Cluster/GpuCatalogue.h"

#include "llvm/Support/raw_ostream.h"

namespace frenzy {

struct Layout {
  int64_t tp = 1, pp = 1, dp = 1, microBatch = 1, microBatches = 1;
  int zero = 0;
  bool sequenceParallel = false;
  Recompute recompute = Recompute::Selective;
  int64_t gpus() const { return tp * pp * dp; }
  int64_t peakBytes = 0; // the fullest stage, per rank
  int worstStage = 0;
};

struct TypePrediction {
  GpuType gpu;
  int64_t available = 0;  // GPUs of this type in the cluster
  int64_t perNode = 0;    // the most on one node (bounds TP)
  std::string unsupported; // why the type cannot run this at all
  std::optional<int64_t> minGpus;
  std::vector<Layout> layouts;      // feasible at minGpus, best first
  int64_t smallestNeed = INT64_MAX; // smallest per-rank peak of any layout tried
  Layout smallestLayout;
};

struct PredictOptions {
  int64_t globalBatch = 1;
  int64_t maxLayouts = 8;
};

/// Fills l.peakBytes and l.worstStage: the per-rank peak of the fullest
/// pipeline stage (layers split evenly, embedding first, head last, 1F1B).
void evaluateLayout(const MemoryModel &model, const MemoryOverheads &o,
                    Layout &l);

/// Errors: a GPU type the catalogue does not know.
llvm::Expected<std::vector<TypePrediction>>
predictResources(const MemoryModel &model, const ClusterSpec &cluster,
                 const PredictOptions &options);

void printPrediction(const std::vector<TypePrediction> &p,
                     const MemoryModel &model, const PredictOptions &o,
                     llvm::raw_ostream &os);
void printPredictionJson(const std::vector<TypePrediction> &p,
                         const MemoryModel &model, const PredictOptions &o,
                         llvm::raw_ostream &os);

} // namespace frenzy

#endif
