//===- Passes.td - frenzy dialect passes ------------------*- tablegen -*-===//
#ifndef FRENZY_TRANSFORMS_PASSES_TD
#define FRENZY_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FrenzyFusePatterns : Pass<"frenzy-fuse", "mlir::ModuleOp"> {
  let summary = "Recognise decomposed GELU, LayerNorm, RMSNorm, SiLU/SwiGLU "
                "and attention and replace them with fused ops";
  let description = [{
    Exporters decompose these into chains of elementwise ops; cost and memory
    analyses must see them as single ops, since a fused kernel neither spends
    the decomposed form's bandwidth nor keeps its intermediates alive.
  }];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyAnnotateBlocks : Pass<"frenzy-annotate-blocks", "mlir::ModuleOp"> {
  let summary = "Annotate every op with the model block it belongs to";
  let description = [{
    Sets `frenzy.block` (#frenzy.block<embed>, <N> or <head>) on every op of
    the model function, and `frenzy.num_blocks` on the module. Layer indices
    come from ONNX node-name scopes (/h.3/..., /layers.3/...,
    /encoder/layers.3/...) or parameter names; when names say nothing, from
    the structure: the longest run of repeated, isomorphic parameterised
    subgraphs.
  }];
  let options = [
    Option<"structuralOnly", "structural-only", "bool", "false",
           "Ignore names and use only the structural fallback">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyAutodiff : Pass<"frenzy-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the training graph: the gradient of the loss with "
                "respect to every trainable parameter";
  let description = [{
    Turns @forward into @train_step. The loss is the model's scalar float
    output (SoftmaxCrossEntropyLoss in the ONNX graph); with
    `loss=cross-entropy` a logits-only model gets a mean cross-entropy over
    its logits output and a `targets` input (added when the model has none).
    Backward ops come from each op's GradientOpInterface rule and are tagged
    `frenzy.backward` with the forward op's block. Every gradient becomes a
    function result named `grad.<param>` carrying `frenzy.grad_of`; tied
    parameters accumulate their uses. Training dropouts get distinct seeds.
  }];
  let options = [
    Option<"loss", "loss", "std::string", "\"auto\"",
           "auto (the model's scalar output) or cross-entropy (add one)">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyOptimizer : Pass<"frenzy-optimizer", "mlir::ModuleOp"> {
  let summary = "Consume the gradients with optimizer update ops";
  let description = [{
    After frenzy-autodiff: inserts one clip_grad_norm over all gradients and
    an adamw_update or sgd_update per parameter, removes the gradients from
    the results (adds `grad_norm`), and records the shared
    hyper-parameters and the learning-rate schedule (linear warmup, then
    cosine decay to min-lr at total-steps) in the module's
    `frenzy.optimizer` dictionary. Weight decay applies to parameters of
    rank >= 2 only (matrices and embeddings, not gains and biases).
  }];
  let options = [
    Option<"kind", "optimizer", "std::string", "\"adamw\"", "adamw or sgd">,
    Option<"lr", "lr", "double", "3e-4", "peak learning rate">,
    Option<"beta1", "beta1", "double", "0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", "0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", "1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", "0.0",
           "decoupled weight decay (AdamW) or L2 (SGD)">,
    Option<"momentum", "momentum", "double", "0.9", "SGD momentum">,
    Option<"warmupSteps", "warmup-steps", "int64_t", "0",
           "steps of linear warmup from 0 to lr">,
    Option<"totalSteps", "total-steps", "int64_t", "0",
           "step at which cosine decay reaches min-lr (0: constant lr)">,
    Option<"minLr", "min-lr", "double", "0.0", "final learning rate">,
    Option<"clipNorm", "clip-norm", "double", "0.0",
           "clip the global gradient norm to this value (0: no clipping)">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyPrecision : Pass<"frenzy-precision", "mlir::ModuleOp"> {
  let summary = "Set the module's precision policy";
  let description = [{
    Records `frenzy.precision` (fp32, bf16-mixed or fp16-mixed) and, for
    fp16, the initial loss scale. See include/frenzy/Analysis/Precision.h
    for the element type and bytes each policy gives every tensor class.
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"fp32\"",
           "fp32, bf16-mixed or fp16-mixed">,
    Option<"lossScale", "loss-scale", "double", "65536.0",
           "initial dynamic loss scale for fp16-mixed">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyEvalMode : Pass<"frenzy-eval-mode", "mlir::ModuleOp"> {
  let summary = "Turn training-only behaviour off for inference";
  let description = [{
    A model exported in training mode keeps its dropouts on (ONNX Dropout
    with training_mode true). An inference plan must not drop anything:
    every `frenzy.dropout` gets training = false and every attention's
    dropout becomes 0, so the plan computes what an ONNX runtime computes
    in inference mode.
  }];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyTensorParallel : Pass<"frenzy-tensor-parallel", "mlir::ModuleOp"> {
  let summary = "One rank's share of a TP group: Megatron splits of the blocks";
  let description = [{
    Before autodiff: column-parallel and row-parallel matmuls of every
    block's weights, with `frenzy.tp_copy` before the former and
    `frenzy.tp_all_reduce` after the latter; split values and parameters
    get their local types, parameters a `frenzy.shard` attribute (dim,
    parts, blocks). Embedding and head stay replicated. With
    sequence-parallel, the layers' token-wise regions (norms, dropout,
    residual and bias adds) then run on the rank's chunk of the tokens:
    sp_reduce_scatter and sp_all_gather replace g and f, sp_scatter and
    sp_gather enter and leave the sharded region (the module gets
    `frenzy.sequence_parallel`).
  }];
  let options = [
    Option<"degree", "degree", "int64_t", "1", "ranks in the TP group">,
    Option<"sequenceParallel", "sequence-parallel", "bool", "false",
           "also shard the token-wise regions by tokens (Megatron SP)">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyTpCheck : Pass<"frenzy-tp-check", "mlir::ModuleOp"> {
  let summary = "Record which TP degrees the forward graph cannot be split for";
  let description = [{
    Before autodiff: runs frenzy-tensor-parallel on a copy of the module for
    each degree and records, in `frenzy.tp_refusals` (degree -> the first
    error, "node '...': why"), the degrees it fails for. frenzy-partition
    never offers those and refuses a --layout that uses one. The module
    itself is not split.
  }];
  let options = [
    ListOption<"degrees", "degrees", "int64_t",
               "TP degrees to check (default: the planner's candidates)">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyPartition : Pass<"frenzy-partition", "mlir::ModuleOp"> {
  let summary = "Partition the training step over a cluster: pipelines, "
                "stages, TP degrees, batch shares";
  let description = [{
    On a module at batch 1 (the memory and cost models scale from it; after
    frenzy-annotate-blocks, usually after the training passes): extracts the
    cost and memory profiles once, runs the partitioner (or scores the
    pinned `layout`) and records the decision: `frenzy.layout =
    #frenzy.layout<...>` on the module (the mesh; per pipeline its stages
    with node, devices, layer range, predicted time and peak memory, its
    micro-batches and sequences; the micro-batch size and predicted step
    time), and on every op of a block `frenzy.placement =
    #frenzy.placement<pp = [...], tp = [...]>` (one entry per pipeline).
    See FrenzyLayoutAttrs.td and docs/partitioner.md.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", "", "the cluster YAML">,
    Option<"globalBatch", "global-batch", "int64_t", "8",
           "sequences per optimizer step">,
    Option<"seq", "seq", "int64_t", "0",
           "sequence length (0: the module's frenzy.seq, else 1024)">,
    Option<"recompute", "recompute", "std::string", "\"selective\"",
           "auto (selective, full on the stages only it fits), none, "
           "selective or full">,
    Option<"schedule", "schedule", "std::string", "\"1f1b\"",
           "the schedule whose memory is checked (gpipe: every "
           "micro-batch of a pipeline in flight)">,
    Option<"layout", "layout", "std::string", "",
           "pin the partition instead of searching (frenzy-opt --layout)">,
    Option<"sequenceParallel", "sequence-parallel", "std::string",
           "\"off\"",
           "Megatron sequence parallelism in the TP groups: off, on, or "
           "auto (on when every TP degree the search may pick divides the "
           "sequence, so every micro-batch's tokens shard)">,
    Option<"explain", "explain", "bool", "false",
           "also record the alternatives considered "
           "(frenzy.partition_alternatives)">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyPipelineSchedule : Pass<"frenzy-pipeline-schedule", "mlir::ModuleOp"> {
  let summary = "Order every stage's forwards and backwards (GPipe or 1F1B)";
  let description = [{
    After frenzy-partition: records `frenzy.schedule = #frenzy.schedule<...>`
    on the module, the schedule kind and per pipeline, per stage, the order
    of its phases as `[F0 F1 B0 ...]`. The plan writer turns these orders into per-rank
    streams with the transfers between stages.
  }];
  let options = [
    Option<"kind", "kind", "std::string", "\"1f1b\"", "1f1b or gpipe">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyPlaceSideTasks : Pass<"frenzy-place-side-tasks", "mlir::ModuleOp"> {
  let summary = "Place side-task steps into the schedule's bubbles";
  let description = [{
    After frenzy-pipeline-schedule: runs the bubble analysis (every idle
    interval of every stage in one step, with the memory free then), reads
    the side tasks of `side-tasks` (YAML, docs/sidetasks.md) and places
    their steps greedily by priority, first-fit into the bubbles within
    each bubble's time less `time-margin` and its free memory less
    `memory-margin` of the GPU's capacity. Records `frenzy.side_tasks`
    (tasks, slots) for the plan writer and prints the harvested GPU time
    per stage and in total, and each task that did not fit and why, to
    stderr.
  }];
  let options = [
    Option<"sideTasks", "side-tasks", "std::string", "\"\"",
           "The side-task file (YAML)">,
    Option<"cluster", "cluster", "std::string", "\"\"",
           "The cluster file (default: the one the partition records)">,
    Option<"memoryMargin", "memory-margin", "double", "0.1",
           "Share of each GPU's memory kept free beside a side task">,
    Option<"timeMargin", "time-margin", "double", "0.05",
           "Share of each bubble kept free at its end">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

#endif // FRENZY_TRANSFORMS_PASSES_TD
