//===- MemoryAnalysis.h - bytes of a training step ---------------*- C++ -*-===//
//
// Memory of one training step of a @train_step function (after
// frenzy-autodiff and, optionally, frenzy-optimizer), read off the graph:
// per-value bytes under the precision policy and the parallel layout, the
// set of forward values the backward reads (saved activations, by block),
// a liveness simulation of the step in program order, and the model states
// (weights, gradients, master weights, optimizer moments) with ZeRO.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_ANALYSIS_MEMORY_MEMORYANALYSIS_H
#define FRENZY_ANALYSIS_MEMORY_MEMORYANALYSIS_H

#include "frenzy/Dialect/Frenzy/IR/Precision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <optional>

namespace frenzy {

enum class Recompute {
  None,      // every forward value the backward reads is kept, and attention
             // keeps its probabilities (and dropout mask and output)
  Selective, // the graph as built: attention recomputes its core (default)
  Full       // only each layer's input is kept; a layer's activations are
             // recomputed during its backward
};
std::optional<Recompute> parseRecompute(llvm::StringRef name);
llvm::StringRef recomputeName(Recompute r);

struct MemoryOptions {
  std::optional<Precision> precision; // default: the module's policy
  int64_t tp = 1;                     // tensor-parallel degree
  bool sequenceParallel = false;      // Korthikanti et al. sequence parallelism
  int64_t dp = 1;                     // data-parallel group size (for ZeRO)
  int zeroStage = 0;                  // 0-3
  Recompute recompute = Recompute::Selective;
  /// Dropout kernels that keep a 1-byte mask (Megatron) rather than
  /// regenerating it from a seed (Frenzy's runtime).
  bool storeDropoutMasks = false;
  /// Count the CPU backend's kernel workspace (runtime/exec kernels).
  bool cpuWorkspace = false;
  /// Model the runtime's executor exactly: parameter gradients are
  /// activations freed after their update (fp32 only), rather than
  /// persistent buffers of the model state.
  bool executorModel = false;
};

/// Model states per rank (bytes), after tensor parallelism and ZeRO.
struct ModelStateBytes {
  int64_t parameters = 0; // elements on this rank before ZeRO
  int64_t weights = 0, gradients = 0, master = 0, moments = 0;
  int64_t total() const { return weights + gradients + master + moments; }
};

/// Mixed-precision (or fp32) model states of `params` parameters with
/// `moments` optimizer moments each, ZeRO stage `zero` over `dp` ranks:
/// stage 1 partitions optimizer state (master + moments), 2 also gradients,
/// 3 also weights (Rajbhandari et al., arXiv 1910.02054).
ModelStateBytes modelStateBytes(int64_t params, Precision p, int moments,
                                int64_t dp, int zero);

struct OpMemory {
  mlir::Operation *op;
  int64_t resultBytes = 0; // bytes of what it produces
  int64_t workspace = 0;   // kernel scratch while it runs
  int64_t liveAfter = 0;   // activation bytes live after it ran
  int64_t transient = 0;   // live + workspace while it runs, minus saved
                           // activations (the working set beyond them)
};

struct MemoryReport {
  Precision precision = Precision::FP32;
  ModelStateBytes state;
  /// Inputs, constants and program outputs (persistent in the runtime).
  int64_t otherPersistent = 0;
  /// High-water mark of activations (and workspace) over the step.
  int64_t activationPeak = 0;
  /// Bytes kept from forward to backward, by block (BlockAttr index).
  std::map<int64_t, int64_t> savedByBlock;
  /// Each saved forward value (null for state the graph does not show as a
  /// value: kept attention probabilities, dropout masks), its block, bytes.
  struct Saved {
    mlir::Value value;
    mlir::Operation *op; // the forward op it comes from
    int64_t block, bytes;
  };
  std::vector<Saved> saved;
  std::vector<OpMemory> ops;
  int64_t peak() const { return state.total() + otherPersistent + activationPeak; }
};

/// Analyses @train_step (or @forward) of `module`. Emits an error and
/// returns failure on an option the module cannot satisfy (a TP degree
/// that does not divide a sharded dim, an unknown ZeRO stage).
mlir::FailureOr<MemoryReport> analyzeMemory(mlir::ModuleOp module,
                                            const MemoryOptions &options);

} // namespace frenzy

#endif
