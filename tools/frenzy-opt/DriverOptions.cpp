//===- DriverOptions.cpp - frenzy-opt's command line ----------------------===//
//
// Every flag of a model run, and the checks that need no model: they fail
// before a large import starts.
//
//===----------------------------------------------------------------------===//
#include "DriverOptions.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace frenzy::driver {

static cl::OptionCategory frenzyCategory("Frenzy model import options");

cl::opt<int64_t> batchSize("batch", cl::desc("Bind dim 0 of every model input"),
                           cl::init(0), cl::cat(frenzyCategory));
cl::opt<int64_t> seqLength("seq", cl::desc("Bind dim 1 of every model input"),
                           cl::init(0), cl::cat(frenzyCategory));
cl::list<std::string>
    dimBindings("dim", cl::desc("Bind a symbolic dim by name: NAME=VALUE"),
                cl::cat(frenzyCategory));
static cl::list<std::string> frozenWeights(
    "frozen",
    cl::desc("Weights to keep fixed (buffers), by name or glob pattern, "
             "comma-separated: --frozen='*.rotary.*,lm_head.weight'"),
    cl::CommaSeparated, cl::cat(frenzyCategory));
static cl::list<std::string> trainableWeights(
    "trainable",
    cl::desc("Weights to train although the graph reads them as position "
             "tables (rotary caches), by name or glob pattern"),
    cl::CommaSeparated, cl::cat(frenzyCategory));
cl::opt<std::string>
    emitKind("emit",
             cl::desc("What to print for a model: mlir, summary, or with "
                      "--cluster report (the partition plan), json, "
                      "bubbles (the schedule's idle intervals), or "
                      "trace (the plan's predicted timeline, Chrome JSON), "
                      "plan-mlir (the module the plan is translated from), "
                      "job-options (frenzy-sched's option table)"),
             cl::init("mlir"), cl::cat(frenzyCategory));
cl::opt<bool>
    noDefaultPipeline("no-default-pipeline",
                      cl::desc("Import only: skip fusion and block annotation"),
                      cl::init(false), cl::cat(frenzyCategory));

static cl::OptionCategory trainCategory("Frenzy training plan options");

std::vector<const cl::OptionCategory *> optionCategories() {
  return {&frenzyCategory, &trainCategory};
}
cl::opt<std::string> clusterFile(
    "cluster",
    cl::desc("Cluster description (YAML): build the training step and write "
             "a plan to -o"),
    cl::cat(trainCategory));
cl::opt<std::string>
    lossKind("loss",
             cl::desc("auto (the model's loss output) or cross-entropy"),
             cl::init("auto"), cl::cat(trainCategory));
cl::opt<std::string> optimizerKind(
    "optimizer",
    cl::desc("adamw, sgd, or none (forward and backward only: the plan "
             "outputs the gradients)"),
    cl::init("adamw"), cl::cat(trainCategory));
cl::opt<bool> predictResources(
    "predict-resources",
    cl::desc("With --cluster: print, per GPU type, the fewest GPUs that hold "
             "the training step and the layouts that fit"),
    cl::init(false), cl::cat(trainCategory));
cl::opt<int64_t>
    globalBatch("global-batch",
                cl::desc("Sequences per optimizer step on any cluster, one "
                         "device included: the partitioner picks micro-batch "
                         "and accumulation (default: --batch, else 8; 1 for "
                         "--predict-resources)"),
                cl::init(0), cl::cat(trainCategory));
cl::opt<bool> explainPlan(
    "explain",
    cl::desc("With --emit=report: list the alternatives considered and why "
             "each lost"),
    cl::init(false), cl::cat(trainCategory));
cl::opt<std::string>
    recomputeMode("recompute",
                  cl::desc("auto (selective, and full recomputation on the "
                           "stages only it fits), or none, selective or full "
                           "for every stage"),
                  cl::init("auto"), cl::cat(trainCategory));
cl::opt<std::string> layoutSpec(
    "layout",
    cl::desc("Pin the partition instead of searching: pipelines separated by "
             "'/', stages by ',', each stage LAYERS[xTP], each pipeline "
             "optionally @MICROBATCHES (e.g. 1,1@3/2@1)"),
    cl::cat(trainCategory));
cl::opt<int64_t> rescoreCount(
    "rescore",
    cl::desc("On a cluster whose GPU types have frenzy-calibrate profiles: "
             "build the search's N best shapes and keep the one whose "
             "predicted timeline is fastest; the report then prints the "
             "timeline's step (0: the search's estimate, nothing re-scored)"),
    cl::init(4), cl::cat(trainCategory));
cl::opt<bool> sequenceParallel(
    "sequence-parallel",
    cl::desc("Megatron sequence parallelism in every TP group: norms, "
             "dropout and residual adds on 1/TP of the tokens, all-gather "
             "and reduce-scatter in place of TP's all-reduce (default: the "
             "planner's choice; off with a --layout; =false: never)"),
    cl::init(false), cl::cat(trainCategory));
cl::opt<std::string> scheduleKind(
    "schedule",
    cl::desc("Pipeline schedule of a multi-rank plan: 1f1b or gpipe"),
    cl::init("1f1b"), cl::cat(trainCategory));
cl::opt<std::string> sideTaskFile(
    "side-tasks",
    cl::desc("With --cluster: place the side tasks of this YAML file "
             "(docs/sidetasks.md) into the pipeline's bubbles"),
    cl::cat(trainCategory));
cl::opt<bool> emitJson("json", cl::desc("--predict-resources output as JSON"),
                       cl::init(false), cl::cat(trainCategory));
cl::opt<bool> inferenceOnly(
    "inference",
    cl::desc("With --cluster: plan the forward pass only (no loss, no "
             "backward, no optimizer)"),
    cl::init(false), cl::cat(trainCategory));
cl::opt<double> learningRate("lr", cl::desc("peak learning rate"),
                             cl::init(3e-4), cl::cat(trainCategory));
cl::opt<double> minLearningRate("min-lr", cl::desc("final learning rate"),
                                cl::init(0.0), cl::cat(trainCategory));
cl::opt<int64_t> warmupSteps("warmup-steps", cl::desc("linear warmup steps"),
                             cl::init(0), cl::cat(trainCategory));
cl::opt<int64_t>
    totalSteps("total-steps",
               cl::desc("cosine decay length (0: constant learning rate)"),
               cl::init(0), cl::cat(trainCategory));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("weight decay of matrices"), cl::init(0.0),
                            cl::cat(trainCategory));
cl::opt<double> clipNorm("clip-norm",
                         cl::desc("global gradient-norm clip (0: off)"),
                         cl::init(0.0), cl::cat(trainCategory));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum"), cl::init(0.9),
                         cl::cat(trainCategory));
cl::opt<std::string> precision("precision",
                               cl::desc("fp32, bf16-mixed or fp16-mixed"),
                               cl::init("fp32"), cl::cat(trainCategory));

std::optional<Mode> modeFor(llvm::StringRef input, llvm::StringRef output) {
  auto fail = [](const llvm::Twine &what) {
    llvm::errs() << "frenzy-opt: error: " << what << "\n";
    return std::nullopt;
  };
  Mode m;
  m.planning = !clusterFile.empty();
  m.predict = predictResources;
  // --emit=report with -o FILE: print the partition and write the plan.
  m.reportAndPlan =
      m.planning && emitKind == "report" && output != "-" && !m.predict;
  // --emit=trace builds the plan as for -o plan.bin, then writes its
  // predicted timeline instead.
  m.emitTrace = m.planning && emitKind == "trace" && !m.predict;
  // --emit=plan-mlir: that plan's module, which frenzy-translate
  // --mlir-to-frenzy-plan turns into the same plan.bin.
  m.emitPlanMlir = m.planning && emitKind == "plan-mlir" && !m.predict;
  m.emitPlan = m.planning && !m.predict &&
               (emitKind.getNumOccurrences() == 0 || m.reportAndPlan ||
                m.emitTrace || m.emitPlanMlir);
  m.partitioning = (emitKind == "report" || emitKind == "json" ||
                    emitKind == "bubbles") &&
                   !m.reportAndPlan;
  m.jobOptions = emitKind == "job-options" && !m.predict;
  if (m.predict && !m.planning)
    return fail("--predict-resources needs --cluster=C.yaml");
  if ((emitKind == "trace" || emitKind == "plan-mlir") && !m.planning)
    return fail("--emit=" + emitKind + " needs --cluster=C.yaml");
  if (emitKind != "mlir" && emitKind != "summary" && !m.partitioning &&
      !m.reportAndPlan && !m.emitTrace && !m.emitPlanMlir && !m.jobOptions)
    return fail("--emit must be mlir, summary, report, json, bubbles, "
                "trace, plan-mlir or job-options, got '" +
                emitKind + "'");
  if (rescoreCount < 0)
    return fail("--rescore must be 0 or more shapes, got " +
                std::to_string(rescoreCount));
  if (scheduleKind != "1f1b" && scheduleKind != "gpipe")
    return fail("unknown --schedule '" + scheduleKind +
                "'; valid values: 1f1b, gpipe");
  if (sequenceParallel.getNumOccurrences() && !m.planning)
    return fail("--sequence-parallel needs --cluster=C.yaml (it shards TP "
                "groups, which only a plan has)");
  if ((m.partitioning || m.jobOptions) && !m.planning)
    return fail("--emit=" + emitKind + " needs --cluster=C.yaml");
  if (m.emitPlan && !m.emitTrace && !m.emitPlanMlir && output == "-")
    return fail("--cluster writes a binary plan; name it with -o plan.bin");
  if (m.emitPlan && llvm::sys::fs::equivalent(input, output))
    return fail("-o " + output +
                " is the model file itself; refusing to overwrite it");
  if (optimizerKind != "adamw" && optimizerKind != "sgd" &&
      optimizerKind != "none")
    return fail("--optimizer must be adamw, sgd or none, got '" +
                optimizerKind + "'");
  PartitionOptions probe;
  if (!setRecompute(probe, recomputeMode))
    return fail("unknown --recompute '" + recomputeMode +
                "'; valid values: auto, none, selective, full");
  return m;
}

std::optional<OnnxImportOptions> importOptions() {
  OnnxImportOptions options;
  if (batchSize > 0)
    options.batch = batchSize;
  if (seqLength > 0)
    options.seq = seqLength;
  for (const std::string &binding : dimBindings) {
    auto [name, value] = llvm::StringRef(binding).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v <= 0) {
      llvm::errs() << "frenzy-opt: error: --dim expects NAME=VALUE with a "
                      "positive VALUE, got '"
                   << binding << "'\n";
      return std::nullopt;
    }
    options.dims[name] = v;
  }
  options.frozen.assign(frozenWeights.begin(), frozenWeights.end());
  options.trainable.assign(trainableWeights.begin(), trainableWeights.end());
  return options;
}

PartitionOptions partitionOptions() {
  PartitionOptions po;
  po.globalBatch = globalBatch > 0 ? int64_t(globalBatch)
                   : batchSize > 0 ? int64_t(batchSize)
                                   : 8;
  po.seq = seqLength > 0 ? int64_t(seqLength) : 1024;
  setRecompute(po, recomputeMode);
  po.gpipe = scheduleKind == "gpipe";
  po.sequenceParallel = sequenceParallelMode() == "on";
  po.sequenceParallelAuto = sequenceParallelMode() == "auto";
  return po;
}

llvm::StringRef sequenceParallelMode() {
  if (sequenceParallel.getNumOccurrences())
    return sequenceParallel ? "on" : "off";
  // Not asked: the search chooses; a pinned --layout is what it says.
  return layoutSpec.empty() ? "auto" : "off";
}

void fillPlan(PlanPipelineOptions &o) {
  fillTraining(o);
  o.cluster = clusterFile.getValue();
  PartitionOptions po = partitionOptions();
  o.globalBatch = po.globalBatch;
  o.seq = po.seq;
  o.recompute = recomputeMode.getValue();
  o.layout = layoutSpec.getValue();
  o.sequenceParallel = sequenceParallelMode().str();
  o.explain = explainPlan.getValue();
  o.schedule = scheduleKind.getValue();
  o.sideTasks = sideTaskFile.getValue();
}

int64_t predictGlobalBatch() {
  return globalBatch > 0 ? int64_t(globalBatch)
         : batchSize > 0 ? int64_t(batchSize)
                         : 1;
}

} // namespace frenzy::driver
