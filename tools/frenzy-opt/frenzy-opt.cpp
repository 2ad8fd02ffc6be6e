//===- frenzy-opt.cpp - the Frenzy compiler driver ------------------------===//
//
// With a .mlir input it behaves exactly like mlir-opt (pass flags,
// -split-input-file, -verify-diagnostics). With an .onnx/.onnxtext input it
// imports the model, runs the default pipeline (fuse, annotate blocks) plus
// any passes given on the command line, and emits what --emit asks for.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Summary/ModelSummary.h"
#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Plan/PlanWriter.h"
#include "frenzy/Planning/LayoutSpec.h"
#include "frenzy/Planning/Partitioner.h"
#include "frenzy/Planning/ResourcePrediction.h"
#include "frenzy/Planning/StagePrograms.h"
#include "frenzy/Planning/TimelineSimulation.h"
#include "plan.pb.h"
#include "frenzy/Import/OnnxImporter.h"
#include "frenzy/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace frenzy::test {
void registerTestPasses();
} // namespace frenzy::test

static cl::OptionCategory frenzyCategory("Frenzy model import options");

static cl::opt<int64_t> batchSize("batch",
                                  cl::desc("Bind dim 0 of every model input"),
                                  cl::init(0), cl::cat(frenzyCategory));
static cl::opt<int64_t> seqLength("seq",
                                  cl::desc("Bind dim 1 of every model input"),
                                  cl::init(0), cl::cat(frenzyCategory));
static cl::list<std::string>
    dimBindings("dim", cl::desc("Bind a symbolic dim by name: NAME=VALUE"),
                cl::cat(frenzyCategory));
static cl::opt<std::string>
    emitKind("emit",
             cl::desc("What to print for a model: mlir, summary, or with "
                      "--cluster report (the partition plan), json, or "
                      "trace (the plan's predicted timeline, Chrome JSON)"),
             cl::init("mlir"), cl::cat(frenzyCategory));
static cl::opt<bool>
    noDefaultPipeline("no-default-pipeline",
                      cl::desc("Import only: skip fusion and block annotation"),
                      cl::init(false), cl::cat(frenzyCategory));

static cl::OptionCategory trainCategory("Frenzy training plan options");
static cl::opt<std::string> clusterFile(
    "cluster",
    cl::desc("Cluster description (YAML): build the training step and write "
             "a plan to -o"),
    cl::cat(trainCategory));
static cl::opt<std::string>
    lossKind("loss", cl::desc("auto (the model's loss output) or cross-entropy"),
             cl::init("auto"), cl::cat(trainCategory));
static cl::opt<std::string> optimizerKind(
    "optimizer",
    cl::desc("adamw, sgd, or none (forward and backward only: the plan "
             "outputs the gradients)"),
    cl::init("adamw"), cl::cat(trainCategory));
static cl::opt<bool> predictResources(
    "predict-resources",
    cl::desc("With --cluster: print, per GPU type, the fewest GPUs that hold "
             "the training step and the layouts that fit"),
    cl::init(false), cl::cat(trainCategory));
static cl::opt<int64_t> globalBatch(
    "global-batch",
    cl::desc("Sequences per optimizer step for --predict-resources "
             "(default: --batch, else 1)"),
    cl::init(0), cl::cat(trainCategory));
static cl::opt<bool> explainPlan(
    "explain",
    cl::desc("With --emit=report: list the alternatives considered and why "
             "each lost"),
    cl::init(false), cl::cat(trainCategory));
static cl::opt<std::string> recomputeMode(
    "recompute",
    cl::desc("auto (selective, and full recomputation on the stages only it "
             "fits), or none, selective or full for every stage"),
    cl::init("auto"), cl::cat(trainCategory));
static cl::opt<std::string> layoutSpec(
    "layout",
    cl::desc("Pin the partition instead of searching: pipelines separated by "
             "'/', stages by ',', each stage LAYERS[xTP], each pipeline "
             "optionally @MICROBATCHES (e.g. 1,1@3/2@1)"),
    cl::cat(trainCategory));
static cl::opt<std::string> scheduleKind(
    "schedule", cl::desc("Pipeline schedule of a multi-rank plan: 1f1b or gpipe"),
    cl::init("1f1b"), cl::cat(trainCategory));
static cl::opt<bool> emitJson("json",
                              cl::desc("--predict-resources output as JSON"),
                              cl::init(false), cl::cat(trainCategory));
static cl::opt<bool> inferenceOnly(
    "inference",
    cl::desc("With --cluster: plan the forward pass only (no loss, no "
             "backward, no optimizer)"),
    cl::init(false), cl::cat(trainCategory));
static cl::opt<double> learningRate("lr", cl::desc("peak learning rate"),
                                    cl::init(3e-4), cl::cat(trainCategory));
static cl::opt<double> minLearningRate("min-lr",
                                       cl::desc("final learning rate"),
                                       cl::init(0.0), cl::cat(trainCategory));
static cl::opt<int64_t> warmupSteps("warmup-steps",
                                    cl::desc("linear warmup steps"),
                                    cl::init(0), cl::cat(trainCategory));
static cl::opt<int64_t>
    totalSteps("total-steps",
               cl::desc("cosine decay length (0: constant learning rate)"),
               cl::init(0), cl::cat(trainCategory));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("weight decay of matrices"),
                                   cl::init(0.0), cl::cat(trainCategory));
static cl::opt<double> clipNorm("clip-norm",
                                cl::desc("global gradient-norm clip (0: off)"),
                                cl::init(0.0), cl::cat(trainCategory));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum"),
                                cl::init(0.9), cl::cat(trainCategory));
static cl::opt<std::string>
    precision("precision", cl::desc("fp32, bf16-mixed or fp16-mixed"),
              cl::init("fp32"), cl::cat(trainCategory));

/// The training passes a --cluster build runs after the default pipeline.
static void addTrainingPipeline(PassManager &pm, int64_t tpDegree) {
  if (tpDegree > 1) {
    frenzy::FrenzyTensorParallelOptions tp;
    tp.degree = tpDegree;
    pm.addPass(frenzy::createFrenzyTensorParallel(tp));
  }
  if (inferenceOnly) {
    pm.addPass(frenzy::createFrenzyEvalMode());
    return;
  }
  frenzy::FrenzyAutodiffOptions ad;
  ad.loss = lossKind;
  pm.addPass(frenzy::createFrenzyAutodiff(ad));
  if (optimizerKind != "none") {
    frenzy::FrenzyOptimizerOptions opt;
    opt.kind = optimizerKind;
    opt.lr = learningRate;
    opt.minLr = minLearningRate;
    opt.warmupSteps = warmupSteps;
    opt.totalSteps = totalSteps;
    opt.weightDecay = weightDecay;
    opt.clipNorm = clipNorm;
    opt.momentum = momentum;
    pm.addPass(frenzy::createFrenzyOptimizer(opt));
  }
  frenzy::FrenzyPrecisionOptions prec;
  prec.policy = precision;
  pm.addPass(frenzy::createFrenzyPrecision(prec));
}

/// Reads the cluster file.
static std::optional<frenzy::ClusterSpec> readCluster() {
  auto cluster = frenzy::readClusterFile(clusterFile);
  if (!cluster) {
    llvm::errs() << "frenzy-opt: error: " << llvm::toString(cluster.takeError())
                 << "\n";
    return std::nullopt;
  }
  return *cluster;
}

/// --predict-resources: the memory model of the training step against every
/// GPU type of the cluster.
static int predict(ModuleOp module, const frenzy::ClusterSpec &cluster,
                   llvm::StringRef input) {
  auto model = frenzy::MemoryModel::build(module, std::nullopt);
  if (failed(model))
    return 1;
  frenzy::PredictOptions po;
  po.globalBatch = globalBatch > 0 ? int64_t(globalBatch)
                   : batchSize > 0 ? int64_t(batchSize)
                                   : 1;
  auto pred = frenzy::predictResources(*model, cluster, po);
  if (!pred) {
    llvm::errs() << "frenzy-opt: error: " << clusterFile << ": "
                 << llvm::toString(pred.takeError()) << "\n";
    return 1;
  }
  if (emitJson)
    frenzy::printPredictionJson(*pred, *model, po, llvm::outs());
  else {
    llvm::outs() << input << ": ";
    frenzy::printPrediction(*pred, *model, po, llvm::outs());
  }
  llvm::outs().flush();
  // Nothing fits anywhere: say by how much.
  const frenzy::TypePrediction *largest = nullptr;
  int64_t need = INT64_MAX;
  for (const frenzy::TypePrediction &p : *pred) {
    if (p.minGpus)
      return 0;
    need = std::min(need, p.smallestNeed);
    if (!largest || p.gpu.memoryBytes > largest->gpu.memoryBytes)
      largest = &p;
  }
  llvm::errs() << "frenzy-opt: error: the model does not fit on any GPU type "
                  "of the cluster even at full parallelism: the smallest "
                  "per-GPU need found is "
               << llvm::formatv("{0:f1}", double(need) / double(1ll << 30))
               << " GiB, the largest GPU (" << largest->gpu.name << ") has "
               << llvm::formatv("{0:f1}",
                                double(largest->gpu.memoryBytes) /
                                    double(1ll << 30))
               << " GiB; add GPUs, use a smaller global batch or sequence\n";
  return 1;
}

/// The options the partitioner runs with, from the command line.
static std::optional<frenzy::PartitionOptions> partitionOptions() {
  frenzy::PartitionOptions po;
  po.globalBatch = globalBatch > 0 ? int64_t(globalBatch)
                   : batchSize > 0 ? int64_t(batchSize)
                                   : 8;
  po.seq = seqLength > 0 ? int64_t(seqLength) : 1024;
  // Full recomputation is frenzy-launch's (a stage's forward rerun before
  // its backward), priced from the selective profile.
  bool automatic = recomputeMode == "auto";
  auto r = automatic ? frenzy::Recompute::Selective
                     : frenzy::parseRecompute(recomputeMode);
  if (!r) {
    llvm::errs() << "frenzy-opt: error: unknown --recompute '" << recomputeMode
                 << "'; valid values: auto, none, selective, full\n";
    return std::nullopt;
  }
  po.fullRecompute = automatic ? 1 : *r == frenzy::Recompute::Full ? 2 : 0;
  po.recompute = *r == frenzy::Recompute::Full ? frenzy::Recompute::Selective
                                                : *r;
  po.gpipe = scheduleKind == "gpipe";
  return po;
}

/// The partition of the cluster for a training step built at batch 1.
static std::optional<frenzy::PartitionPlan>
partitionCluster(ModuleOp module, const frenzy::ClusterSpec &cluster,
                 const frenzy::PartitionOptions &po,
                 std::vector<frenzy::Alternative> *alternatives = nullptr,
                 std::optional<frenzy::CostModel> *costOut = nullptr) {
  auto memory = frenzy::MemoryModel::build(module, std::nullopt);
  if (failed(memory))
    return std::nullopt;
  auto cost = frenzy::CostModel::build(module, memory->precision());
  if (failed(cost))
    return std::nullopt;
  auto plan = [&]() -> llvm::Expected<frenzy::PartitionPlan> {
    if (layoutSpec.empty())
      return frenzy::partition(*cost, *memory, cluster, po, alternatives);
    auto pinned = frenzy::parseLayout(layoutSpec, cluster, cost->numLayers(),
                                      po.globalBatch);
    if (!pinned)
      return pinned.takeError();
    return frenzy::evaluatePlan(*cost, *memory, cluster, po, *pinned);
  }();
  if (!plan) {
    llvm::errs() << "frenzy-opt: error: " << clusterFile << ": "
                 << llvm::toString(plan.takeError()) << "\n";
    return std::nullopt;
  }
  if (costOut)
    *costOut = *cost;
  if (!plan->scheduleNote.empty())
    llvm::errs() << "frenzy-opt: note: " << plan->scheduleNote
                 << "; using 1f1b\n";
  return *plan;
}

/// --emit=report|json: the heterogeneous partition of the cluster.
static int emitPartition(ModuleOp module, const frenzy::ClusterSpec &cluster) {
  auto po = partitionOptions();
  if (!po)
    return 1;
  std::vector<frenzy::Alternative> alternatives;
  std::optional<frenzy::CostModel> cost;
  auto plan = partitionCluster(module, cluster, *po,
                               explainPlan ? &alternatives : nullptr, &cost);
  if (!plan)
    return 1;
  if (emitKind == "json") {
    frenzy::printPlanJson(*plan, cluster, *cost, *po, llvm::outs());
    return 0;
  }
  frenzy::printPlanReport(*plan, cluster, *cost, *po, llvm::outs());
  if (explainPlan) {
    llvm::outs() << "alternatives considered (" << alternatives.size()
                 << "), fastest first:\n";
    size_t shown = 0;
    for (const frenzy::Alternative &a : alternatives) {
      if (++shown > 25)
        break;
      llvm::outs() << llvm::formatv("  {0,8:f1} ms  {1}  [{2}]\n",
                                    a.stepSeconds * 1e3, a.description, a.why);
    }
  }
  return 0;
}

/// --emit=trace: the plan's predicted timeline instead of plan.bin.
static int writePredictedTrace(const frenzy::plan::Plan &plan,
                               const frenzy::ClusterSpec &cluster,
                               llvm::StringRef output) {
  frenzy::PredictedTimeline t = frenzy::simulateTimeline(plan, cluster);
  std::string error;
  auto out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
    return 1;
  }
  frenzy::writePredictedTrace(plan, t, out->os());
  out->keep();
  llvm::errs() << llvm::formatv("frenzy-opt: predicted timeline of {0} "
                                "rank(s), step {1:f2} ms, written to {2}\n",
                                t.rankSeconds.size(), t.stepSeconds * 1e3,
                                output);
  return 0;
}

/// Writes plan.bin.
static int writePlan(ModuleOp module, llvm::StringRef input,
                     const frenzy::ClusterSpec &cluster, llvm::StringRef output,
                     const frenzy::PartitionPlan *partition = nullptr,
                     const frenzy::PartitionOptions *po = nullptr,
                     llvm::ArrayRef<OwningOpRef<ModuleOp>> more = {}) {
  frenzy::plan::Plan plan;
  if (failed(frenzy::buildPlan(module, input, clusterFile, cluster, plan)))
    return 1;
  for (const OwningOpRef<ModuleOp> &m : more)
    if (failed(frenzy::lowerProgram(*m, *plan.add_more_programs())))
      return 1;
  if (partition)
    frenzy::addStagePrograms(
        *partition, cluster, *po,
        frenzy::scheduleOrders(*partition,
                               partition->gpipe
                                   ? frenzy::PipelineSchedule::GPipe
                                   : frenzy::PipelineSchedule::OneFOneB),
        plan);
  if (emitKind == "trace")
    return writePredictedTrace(plan, cluster, output);
  if (llvm::Error e = frenzy::writePlanFile(plan, output)) {
    llvm::errs() << "frenzy-opt: error: " << llvm::toString(std::move(e))
                 << "\n";
    return 1;
  }
  llvm::errs() << "frenzy-opt: wrote " << output << " ("
               << plan.program().instrs_size() << " instructions, "
               << plan.program().params_size() << " parameters, "
               << plan.program().tensors_size() << " tensors";
  if (partition)
    llvm::errs() << ", " << plan.ranks_size() << " ranks in "
                 << plan.stages_size() << " stages";
  llvm::errs() << ")\n";
  return 0;
}

/// "file: node 'name'" for a location, without the 0:0 of whole-file errors.
static std::string describe(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string inner = describe(name.getChildLoc());
    return (inner.empty() ? "" : inner + ": ") + "node '" +
           name.getName().str() + "'";
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string s = file.getFilename().str();
    if (file.getLine())
      s += ":" + std::to_string(file.getLine()) + ":" +
           std::to_string(file.getColumn());
    return s;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return describe(fused.getLocations().front());
  return "";
}

static int runOnModel(llvm::StringRef input, llvm::StringRef output,
                      DialectRegistry &registry,
                      const MlirOptMainConfig &config) {
  MLIRContext context(registry);
  context.getDiagEngine().registerHandler([](Diagnostic &diag) {
    auto &os = llvm::errs();
    std::string where = describe(diag.getLocation());
    if (!where.empty())
      os << where << ": ";
    os << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: "
           : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning: "
                                                               : "note: ")
       << diag.str() << "\n";
    return success();
  });

  frenzy::OnnxImportOptions options;
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
      return 1;
    }
    options.dims[name] = v;
  }
  bool planning = !clusterFile.empty();
  // --emit=report with -o FILE: print the partition and write the plan.
  bool reportAndPlan = planning && emitKind == "report" && output != "-" &&
                       !predictResources;
  // --emit=trace builds the plan as for -o plan.bin, then writes its
  // predicted timeline instead.
  bool emitTrace = planning && emitKind == "trace" && !predictResources;
  bool emitPlan = planning && !predictResources &&
                  (emitKind.getNumOccurrences() == 0 || reportAndPlan ||
                   emitTrace);
  bool partitioning =
      (emitKind == "report" || emitKind == "json") && !reportAndPlan;
  if (predictResources && !planning) {
    llvm::errs() << "frenzy-opt: error: --predict-resources needs "
                    "--cluster=C.yaml\n";
    return 1;
  }
  if (predictResources || partitioning)
    options.batch = 1; // the memory and cost models scale from batch 1
  if (emitKind == "trace" && !planning) {
    llvm::errs() << "frenzy-opt: error: --emit=trace needs --cluster=C.yaml\n";
    return 1;
  }
  if (emitKind != "mlir" && emitKind != "summary" && !partitioning &&
      !reportAndPlan && !emitTrace) {
    llvm::errs() << "frenzy-opt: error: --emit must be mlir, summary, report, "
                    "json or trace, got '"
                 << emitKind << "'\n";
    return 1;
  }
  if (scheduleKind != "1f1b" && scheduleKind != "gpipe") {
    llvm::errs() << "frenzy-opt: error: unknown --schedule '" << scheduleKind
                 << "'; valid values: 1f1b, gpipe\n";
    return 1;
  }
  if (partitioning && !planning) {
    llvm::errs() << "frenzy-opt: error: --emit=" << emitKind
                 << " needs --cluster=C.yaml\n";
    return 1;
  }
  if (emitPlan && !emitTrace && output == "-") {
    llvm::errs() << "frenzy-opt: error: --cluster writes a binary plan; name "
                    "it with -o plan.bin\n";
    return 1;
  }
  if (emitPlan && llvm::sys::fs::equivalent(input, output)) {
    llvm::errs() << "frenzy-opt: error: -o " << output
                 << " is the model file itself; refusing to overwrite it\n";
    return 1;
  }
  if (optimizerKind != "adamw" && optimizerKind != "sgd" &&
      optimizerKind != "none") {
    llvm::errs() << "frenzy-opt: error: --optimizer must be adamw, sgd or "
                    "none, got '"
                 << optimizerKind << "'\n";
    return 1;
  }

  // The cluster first: its errors should not wait for a large import.
  std::optional<frenzy::ClusterSpec> cluster;
  if (planning && !(cluster = readCluster()))
    return 1;

  // A multi-device plan is partitioned on the step at batch 1, then
  // compiled again at the chosen micro-batch size.
  bool multiDevice = emitPlan && cluster->totalDevices() > 1;
  if (multiDevice)
    options.batch = 1;
  auto build = [&](const frenzy::OnnxImportOptions &o, int64_t tpDegree = 1)
      -> OwningOpRef<ModuleOp> {
    OwningOpRef<ModuleOp> m = frenzy::importOnnxFile(input, o, &context);
    if (!m || failed(verify(*m)))
      return nullptr;
    PassManager pm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return nullptr;
    if (!noDefaultPipeline) {
      pm.addPass(frenzy::createFrenzyFusePatterns());
      pm.addPass(frenzy::createFrenzyAnnotateBlocks());
    }
    if (planning)
      addTrainingPipeline(pm, tpDegree);
    if (failed(config.setupPassPipeline(pm)) || failed(pm.run(*m)))
      return nullptr;
    return m;
  };
  OwningOpRef<ModuleOp> module = build(options);
  if (!module)
    return 1;
  if (multiDevice) {
    auto po = partitionOptions();
    if (!po)
      return 1;
    std::optional<frenzy::CostModel> cost;
    auto partition = partitionCluster(*module, *cluster, *po, nullptr, &cost);
    if (!partition)
      return 1;
    if (reportAndPlan)
      frenzy::printPlanReport(*partition, *cluster, *cost, *po, llvm::outs());
    // The runtime's programs are one rank's: the step at the micro-batch
    // size, split for each pipeline's TP degree (the first pipeline's is
    // Plan.program, other degrees go to more_programs). A pipeline whose
    // stages differ in degree keeps the unsplit program, which frenzy-launch
    // refuses to run with TP.
    std::vector<int64_t> degrees =
        frenzy::pipelineTpDegrees(*partition).value_or(std::vector<int64_t>{1});
    std::vector<OwningOpRef<ModuleOp>> more;
    if (partition->microBatch != 1 || degrees != std::vector<int64_t>{1}) {
      frenzy::OnnxImportOptions again = options;
      again.batch = partition->microBatch;
      module = nullptr;
      std::vector<int64_t> distinct;
      for (int64_t d : degrees)
        if (std::find(distinct.begin(), distinct.end(), d) == distinct.end())
          distinct.push_back(d);
      // A model the TP pass cannot split still gets its plan (the search
      // only needs the split fractions); only the runtime program stays
      // whole, and frenzy-launch says so.
      std::string why;
      {
        ScopedDiagnosticHandler capture(&context, [&](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error && why.empty())
            why = d.str();
          return success();
        });
        for (int64_t d : distinct) {
          OwningOpRef<ModuleOp> m = build(again, d);
          if (!m) {
            more.clear();
            module = nullptr;
            break;
          }
          if (!module)
            module = std::move(m);
          else
            more.push_back(std::move(m));
        }
      }
      if (!module && distinct != std::vector<int64_t>{1})
        llvm::errs() << "frenzy-opt: warning: the runtime program is not "
                        "split for TP (" << why
                     << "); frenzy-launch will refuse this plan\n";
      if (!module && !(module = build(again)))
        return 1;
    }
    return writePlan(*module, input, *cluster, output, &*partition, &*po,
                     more);
  }
  if (predictResources)
    return predict(*module, *cluster, input);
  if (partitioning)
    return emitPartition(*module, *cluster);
  if (emitPlan)
    return writePlan(*module, input, *cluster, output);

  std::string error;
  auto out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
    return 1;
  }
  if (emitKind == "summary")
    frenzy::printSummary(frenzy::summarize(*module), out->os());
  else
    module->print(out->os(), OpPrintingFlags());
  out->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  frenzy::registerAllPasses();
  frenzy::test::registerTestPasses();

  auto [input, output] = registerAndParseCLIOptions(
      argc, argv, "Frenzy compiler: ONNX model -> training plan\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  if (frenzy::isOnnxPath(input))
    return runOnModel(input, output, registry, config);

  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
    return 1;
  }
  auto out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(out->os(), std::move(file), registry, config)))
    return 1;
  out->keep();
  return 0;
}
