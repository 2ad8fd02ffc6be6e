//===- Pipelines.h - Frenzy's named pass pipelines --------------*- C++ -*-===//
//
// Two pipelines, registered by name so `frenzy-opt in.mlir
// --pass-pipeline='builtin.module(frenzy-plan{cluster=c.yaml})'` (or
// `-frenzy-plan=...`) runs exactly what the driver runs on a model:
//
//   frenzy-training  [frenzy-tensor-parallel] frenzy-autodiff
//                    [frenzy-optimizer] frenzy-precision
//                    (inference: frenzy-eval-mode only)
//   frenzy-plan      frenzy-training (TP 1, at batch 1), frenzy-partition,
//                    frenzy-pipeline-schedule
//
// Both expect a module after frenzy-fuse and frenzy-annotate-blocks (what
// frenzy-opt does on import).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_PIPELINES_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace frenzy {

/// The training step's options, shared by both pipelines.
template <typename Self>
struct TrainingOptionsBase : mlir::PassPipelineOptions<Self> {
  template <typename T>
  using Opt = mlir::detail::PassOptions::Option<T>;
  Opt<bool> inference{*this, "inference",
                      llvm::cl::desc("forward only: no loss, backward or "
                                     "optimizer; dropout off"),
                      llvm::cl::init(false)};
  Opt<std::string> loss{*this, "loss",
                        llvm::cl::desc("auto or cross-entropy"),
                        llvm::cl::init("auto")};
  Opt<std::string> optimizer{*this, "optimizer",
                             llvm::cl::desc("adamw, sgd or none"),
                             llvm::cl::init("adamw")};
  Opt<double> lr{*this, "lr", llvm::cl::desc("peak learning rate"),
                 llvm::cl::init(3e-4)};
  Opt<double> minLr{*this, "min-lr", llvm::cl::desc("final learning rate"),
                    llvm::cl::init(0.0)};
  Opt<int64_t> warmupSteps{*this, "warmup-steps",
                           llvm::cl::desc("linear warmup steps"),
                           llvm::cl::init(0)};
  Opt<int64_t> totalSteps{*this, "total-steps",
                          llvm::cl::desc("cosine decay length (0: constant)"),
                          llvm::cl::init(0)};
  Opt<double> weightDecay{*this, "weight-decay",
                          llvm::cl::desc("weight decay of matrices"),
                          llvm::cl::init(0.0)};
  Opt<double> clipNorm{*this, "clip-norm",
                       llvm::cl::desc("global gradient-norm clip (0: off)"),
                       llvm::cl::init(0.0)};
  Opt<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                       llvm::cl::init(0.9)};
  Opt<std::string> precision{*this, "precision",
                             llvm::cl::desc("fp32, bf16-mixed or fp16-mixed"),
                             llvm::cl::init("fp32")};
};

struct TrainingPipelineOptions : TrainingOptionsBase<TrainingPipelineOptions> {
  Opt<int64_t> tpDegree{*this, "tp-degree",
                        llvm::cl::desc("ranks of a TP group (1: no split)"),
                        llvm::cl::init(1)};
  Opt<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("with tp-degree > 1: Megatron sequence parallelism"),
      llvm::cl::init(false)};
};

struct PlanPipelineOptions : TrainingOptionsBase<PlanPipelineOptions> {
  Opt<std::string> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("Megatron sequence parallelism in the TP groups: off, "
                     "on or auto (frenzy-partition's)"),
      llvm::cl::init("off")};
  Opt<std::string> cluster{*this, "cluster",
                           llvm::cl::desc("the cluster YAML")};
  Opt<int64_t> globalBatch{*this, "global-batch",
                           llvm::cl::desc("sequences per optimizer step"),
                           llvm::cl::init(8)};
  Opt<int64_t> seq{*this, "seq",
                   llvm::cl::desc("sequence length (0: the module's)"),
                   llvm::cl::init(0)};
  Opt<std::string> recompute{*this, "recompute",
                             llvm::cl::desc("auto, none, selective or full"),
                             llvm::cl::init("selective")};
  Opt<std::string> layout{*this, "layout",
                          llvm::cl::desc("pin the partition (see --layout)")};
  Opt<bool> explain{*this, "explain",
                    llvm::cl::desc("record the alternatives considered"),
                    llvm::cl::init(false)};
  Opt<std::string> schedule{*this, "schedule",
                            llvm::cl::desc("1f1b or gpipe"),
                            llvm::cl::init("1f1b")};
  Opt<std::string> sideTasks{
      *this, "side-tasks",
      llvm::cl::desc("side-task YAML to place into the bubbles (empty: "
                     "none)")};
};

void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &options);
void buildPlanPipeline(mlir::OpPassManager &pm,
                       const PlanPipelineOptions &options);

/// Registers frenzy-training and frenzy-plan.
void registerFrenzyPipelines();

} // namespace frenzy

#endif
