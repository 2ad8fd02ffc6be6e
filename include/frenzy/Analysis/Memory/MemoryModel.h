//===- MemoryModel.h - fast per-rank peak-memory queries --------*- C++ -*-===//
//
// The partitioner scores thousands of layouts; running the liveness
// analysis for each would be too slow. MemoryModel runs it a few times per
// recompute mode when built, splits every block's saved activations into
// the part tensor parallelism divides, the part only sequence parallelism
// divides and the part nothing divides, and then answers a query in time
// linear in the number of blocks of the stage.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_ANALYSIS_MEMORY_MEMORYMODEL_H
#define FRENZY_ANALYSIS_MEMORY_MEMORYMODEL_H

#include "frenzy/Analysis/Memory/MemoryAnalysis.h"
#include "frenzy/Support/RangeMax.h"

#include <tuple>

namespace frenzy {

/// Per-GPU memory the tensors cannot use.
struct MemoryOverheads {
  int64_t contextBytes = 512ll << 20;  // CUDA context (GpuType::contextBytes)
  int64_t ncclBytes = 256ll << 20;     // per communicator the rank is in
  int64_t workspaceBytes = 0; // fixed backend buffers (GpuType::workspaceBytes)
  double fragmentation = 0.05;         // allocator slack, share of tensors
};

struct StageQuery {
  int64_t firstLayer = 0, lastLayer = -1; // inclusive; empty when last < first
  bool embed = false, head = false;       // the stage holds them too
  int64_t microBatch = 1;
  int64_t tp = 1;
  bool sequenceParallel = false;
  int64_t dp = 1;
  int zeroStage = 0;
  Recompute recompute = Recompute::Selective;
  /// Micro-batches whose activations the stage holds at once: p - s for
  /// stage s of p under 1F1B, m under GPipe.
  int64_t inFlight = 1;
};

struct StageMemory {
  int64_t state = 0, activations = 0, transient = 0, overhead = 0;
  int64_t total() const { return state + activations + transient + overhead; }
};

class MemoryModel {
public:
  /// Builds from a module after frenzy-autodiff (and frenzy-optimizer) at
  /// micro-batch `frenzy.batch`; `precision` overrides the module's policy.
  static mlir::FailureOr<MemoryModel> build(mlir::ModuleOp module,
                                            std::optional<Precision> precision);

  StageMemory query(const StageQuery &q, const MemoryOverheads &o) const;
  int64_t numLayers() const { return layers; }
  int64_t referenceBatch() const { return batch0; }
  Precision precision() const { return prec; }

  struct Part {
    int64_t split = 0, layerOnly = 0, whole = 0; // bytes at micro-batch b0
    int64_t at(int64_t tp, bool sp) const;
  };
  struct BlockInfo {
    int64_t splitParams = 0, wholeParams = 0, buffers = 0;
    Part saved[3];     // by Recompute
    Part transient[3]; // the block's largest working set beyond saved
  };
  /// A block's parts (null when it has none), the optimizer's moments and
  /// the head's inputs: what the MLIR-free planning problem copies
  /// (buildPlanProblem), so its solvers answer queries like this model.
  const BlockInfo *block(int64_t index) const { return find(index); }
  int64_t optimizerMoments() const { return moments; }
  int64_t headIoBytes() const { return ioBytes; }

private:
  BlockInfo &blockInfo(int64_t block);
  const BlockInfo *find(int64_t block) const;

  /// Layer-range sums (prefix arrays) and maxima (sparse table) for one
  /// (recompute, TP, SP) combination, so a query is O(1) in the range.
  struct LayerTable {
    std::vector<int64_t> splitParams, wholeParams, buffers, saved;
    RangeMax transientMax; // per-layer transient peaks
  };
  const LayerTable &table(int r, int64_t tp, bool sp) const;

  std::map<int64_t, BlockInfo> blocks; // BlockAttr index -> info
  mutable std::map<std::tuple<int, int64_t, bool>, LayerTable> tables;
  int64_t layers = 0, batch0 = 1, moments = 2, ioBytes = 0;
  Precision prec = Precision::FP32;
};

} // namespace frenzy

#endif
