//===- CostModel.h - predicted time of a training step ----------*- C++ -*-===//
//
// Roofline per op: max(flops / (peak x efficiency), bytes / (bandwidth x
// efficiency)), summed per model block over the training graph (forward,
// backward and update ops of that block), for one micro-batch of the
// reference size. Communication: ring all-reduce inside a TP group, pipeline
// point-to-point at stage boundaries, data-parallel gradient all-reduce over
// the slowest link. Efficiencies are documented defaults (docs/partitioner.md)
// until measured runtime timings calibrate them.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_COSTMODEL_H
#define FRENZY_PLANNING_COSTMODEL_H

#include "frenzy/Cluster/GpuCatalogue.h"
#include "frenzy/Dialect/Frenzy/IR/Precision.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <tuple>

namespace frenzy {

struct Efficiency {
  double matmul = 0.6;  // share of peak tensor FLOPS dense contractions reach
  double memory = 0.7;  // share of peak bandwidth memory-bound ops reach
  double network = 0.8; // share of link bandwidth collectives reach
  /// Fixed cost of one collective inside a node, seconds: NCCL's
  /// small-message all-reduce latency is about 10 us over NVLink or PCIe
  /// (nccl-tests all_reduce_perf at 8 B). Without it TP looks free for
  /// small layers, where it only adds latency.
  double collectiveLatency = 10e-6;
};

class CostModel {
public:
  /// From a module after frenzy-autodiff (and frenzy-optimizer).
  static mlir::FailureOr<CostModel> build(mlir::ModuleOp module,
                                          Precision precision,
                                          Efficiency eff = {});

  /// Seconds of forward + backward + update of `block` for one micro-batch
  /// of `microBatch` sequences on one GPU of `gpu` (no parallelism).
  double blockSeconds(int64_t block, const GpuType &gpu,
                      int64_t microBatch) const;
  /// The forward part of blockSeconds (not cached): what full
  /// recomputation runs again before the block's backward.
  double blockForwardSeconds(int64_t block, const GpuType &gpu,
                             int64_t microBatch) const;
  /// Training FLOPs of one sequence through the whole model.
  double flopsPerSequence() const { return totalFlops / double(batch0); }
  /// Bytes crossing a layer boundary per sequence (the hidden state).
  int64_t boundaryBytesPerSequence() const { return boundaryBytes; }
  /// Parameters of a block (trainable).
  int64_t blockParams(int64_t block) const;
  int64_t numLayers() const { return layers; }
  Precision precision() const { return prec; }
  const Efficiency &efficiency() const { return eff; }

private:
  struct OpCost {
    double flops = 0, bytes = 0;
    bool contraction = false, attention = false;
    bool forward = false; // neither backward nor an optimizer update
  };
  /// One op at `f` times its reference size, by profile or roofline.
  double opSeconds(const OpCost &oc, const GpuType &gpu, double f) const;
  std::map<int64_t, std::vector<OpCost>> ops; // by block, at batch0
  std::map<int64_t, int64_t> params;
  int64_t layers = 0, batch0 = 1, boundaryBytes = 0;
  double totalFlops = 0;
  Precision prec = Precision::BF16Mixed;
  Efficiency eff;
  mutable std::map<std::pair<int64_t, std::string>, double> cache;
  /// A calibrated type's seconds by (block, type, micro-batch): measured
  /// rates depend on the kernel's size, so they do not scale linearly.
  mutable std::map<std::tuple<int64_t, std::string, int64_t>, double>
      profiled;
};

} // namespace frenzy

#endif
