//===- frenzy-opt.cpp - the Frenzy compiler driver ------------------------===//
//
// With a .mlir input it behaves exactly like mlir-opt (pass flags,
// -split-input-file, -verify-diagnostics, --pass-pipeline with Frenzy's
// named pipelines). With an .onnx/.onnxtext input it imports the model
// once, runs the default pipeline (fuse, annotate blocks), and then the
// named pipelines the flags ask for: frenzy-training for a one-device plan
// or --predict-resources, frenzy-plan (training at batch 1, partition,
// schedule) for a cluster; the step at the chosen micro-batch size is
// cloned per TP degree the partition uses. Flags: DriverOptions.h; what
// is printed and written: Outputs.h.
//
//===----------------------------------------------------------------------===//
#include "DriverOptions.h"
#include "JobOptions.h"
#include "Outputs.h"

#include "frenzy/Analysis/Summary/ModelSummary.h"
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/Dialect/Frenzy/Transforms/SideTaskAttrs.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Dialect/Frenzy/Transforms/TensorParallel.h"
#include "frenzy/Import/OnnxImporter.h"
#include "frenzy/InitAll.h"
#include "frenzy/Planning/LayoutSpec.h"

#include "frenzy/Support/ToolHelp.h"

#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/Timing.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace frenzy::driver;
namespace cl = llvm::cl;

namespace frenzy::test {
void registerTestPasses();
} // namespace frenzy::test

namespace {

/// One model run: the context, the import, and pass pipelines with the
/// command line's pass-manager flags and extra passes (run last).
struct ModelRun {
  llvm::StringRef input;
  MLIRContext &context;
  const MlirOptMainConfig &config;

  /// Imports at `o` and runs the default pipeline.
  OwningOpRef<ModuleOp> import(const frenzy::OnnxImportOptions &o) {
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
    if (failed(pm.run(*m)))
      return nullptr;
    return m;
  }

  /// Runs `build`'s passes, then the passes named on the command line.
  LogicalResult run(ModuleOp m,
                    llvm::function_ref<void(OpPassManager &)> build) {
    PassManager pm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    build(pm);
    if (failed(config.setupPassPipeline(pm)))
      return failure();
    return pm.run(m);
  }

  /// A copy of `base` as the training step at TP `degree` (with sequence
  /// parallelism when `sp`).
  OwningOpRef<ModuleOp> training(ModuleOp base, int64_t degree,
                                 bool sp = false) {
    OwningOpRef<ModuleOp> m = base.clone();
    frenzy::TrainingPipelineOptions o;
    fillTraining(o);
    o.tpDegree = degree;
    o.sequenceParallel = sp;
    if (failed(run(*m, [&](OpPassManager &pm) {
          frenzy::buildTrainingPipeline(pm, o);
        })))
      return nullptr;
    return m;
  }
};

} // namespace

/// The runtime's programs for a partition recorded in `planned`: the step
/// at its micro-batch size (from `base` when that is the size it was
/// imported at, else imported again), split for each TP degree among the
/// pipelines (the first pipeline's is the main program, other degrees go
/// to `more`). A degree the TP pass cannot split the model for is an error
/// with its reason, and nothing is written (the planner does not offer
/// such degrees; a --layout can still name one frenzy-tp-check did not
/// try).
static OwningOpRef<ModuleOp>
stepPrograms(ModelRun &r, ModuleOp planned, OwningOpRef<ModuleOp> base,
             frenzy::OnnxImportOptions options,
             std::vector<OwningOpRef<ModuleOp>> &more) {
  auto rec = frenzy::readPartition(planned);
  if (failed(rec) || !*rec)
    return nullptr;
  const frenzy::PartitionPlan &pp = (*rec)->plan;
  if (pp.microBatch != options.batch) {
    options.batch = pp.microBatch;
    base = r.import(options);
    if (!base)
      return nullptr;
  }
  std::optional<std::vector<int64_t>> degrees = frenzy::pipelineTpDegrees(pp);
  if (!degrees) {
    llvm::errs() << "frenzy-opt: error: a pipeline's stages have different "
                    "TP degrees, which frenzy-launch cannot run; give every "
                    "stage of a pipeline the same degree\n";
    return nullptr;
  }
  std::vector<int64_t> distinct;
  for (int64_t d : *degrees)
    if (std::find(distinct.begin(), distinct.end(), d) == distinct.end())
      distinct.push_back(d);
  // What the partition recorded (--sequence-parallel, or the planner's
  // choice), as the memory model costed it.
  bool sp = pp.sequenceParallel;
  for (int64_t d : distinct)
    if (std::string why = frenzy::tensorParallelRefusal(*base, d, sp);
        !why.empty()) {
      llvm::errs() << "frenzy-opt: error: TP " << d << (sp ? " with SP" : "")
                   << " is refused: the model cannot be split " << d
                   << " ways (" << frenzy::oneLine(why)
                   << "); use a layout without TP " << d
                   << " (nothing written)\n";
      return nullptr;
    }
  OwningOpRef<ModuleOp> main;
  for (int64_t d : distinct) {
    OwningOpRef<ModuleOp> m = r.training(*base, d, sp && d > 1);
    if (!m)
      return nullptr;
    if (!main)
      main = std::move(m);
    else
      more.push_back(std::move(m));
  }
  // The plan writer reads the decision from the program it lowers.
  for (llvm::StringRef name :
       {frenzy::kLayoutAttrName, frenzy::kScheduleAttrName,
        frenzy::kSideTasksAttrName})
    if (mlir::Attribute a = planned->getAttr(name))
      (*main)->setAttr(name, a);
  return main;
}

/// The planned module (training step at batch 1, partition, schedule) of
/// `base` with the command line's options, the partition pinned to
/// `layout` when given.
static OwningOpRef<ModuleOp> plannedModule(ModelRun &r, ModuleOp base,
                                           llvm::StringRef layout) {
  OwningOpRef<ModuleOp> planned = base.clone();
  frenzy::PlanPipelineOptions po;
  fillPlan(po);
  if (!layout.empty()) {
    po.layout = layout.str();
    po.explain = false;
  }
  if (failed(r.run(*planned, [&](OpPassManager &pm) {
        frenzy::buildPlanPipeline(pm, po);
      })))
    return nullptr;
  return planned;
}

/// The step programs of the partition `planned` records: the step at the
/// micro-batch size (returned) and, in `more` (views in `others`), the step
/// split for its other TP degrees; null after an error was printed.
static OwningOpRef<ModuleOp>
stepsFor(ModelRun &r, ModuleOp planned, ModuleOp base,
         const frenzy::OnnxImportOptions &options,
         std::vector<OwningOpRef<ModuleOp>> &more,
         std::vector<ModuleOp> &others) {
  OwningOpRef<ModuleOp> step =
      stepPrograms(r, planned, base.clone(), options, more);
  for (OwningOpRef<ModuleOp> &m : more)
    others.push_back(*m);
  return step;
}

/// The runtime's plan for the partition `planned` records.
static int buildFor(ModelRun &r, ModuleOp planned, ModuleOp base,
                    const frenzy::OnnxImportOptions &options,
                    const frenzy::ClusterSpec &cluster, bool play,
                    BuiltPlan &out) {
  std::vector<OwningOpRef<ModuleOp>> more;
  std::vector<ModuleOp> others;
  OwningOpRef<ModuleOp> step = stepsFor(r, planned, base, options, more, others);
  return step ? buildPlanOf(*step, others, r.input, cluster, play, out) : 1;
}

/// --emit=plan-mlir: the step module of the partition `planned` records,
/// as the plan translation (frenzy-translate) reads it.
static int printStepFor(ModelRun &r, ModuleOp planned, ModuleOp base,
                        const frenzy::OnnxImportOptions &options,
                        llvm::StringRef output) {
  std::vector<OwningOpRef<ModuleOp>> more;
  std::vector<ModuleOp> others;
  OwningOpRef<ModuleOp> step = stepsFor(r, planned, base, options, more, others);
  return step ? printPlanModule(*step, others, output) : 1;
}

/// A multi-device plan: partitioned on the step at batch 1 (`base`), then
/// compiled at the micro-batch size. On a calibrated cluster the plan is
/// played on the predicted timeline, and a searched one competes with the
/// search's next best shapes (--rescore) by that timeline: the planner
/// keeps the fastest, and the report, plan.bin and --emit=trace carry the
/// same step (docs/calibration.md, "One cost model").
static int planAndWrite(ModelRun &r, ModuleOp base,
                        const frenzy::OnnxImportOptions &options,
                        const Mode &mode, const frenzy::ClusterSpec &cluster,
                        llvm::StringRef output) {
  OwningOpRef<ModuleOp> planned = plannedModule(r, base, "");
  if (!planned)
    return 1;
  bool report = mode.partitioning || mode.reportAndPlan;
  std::optional<BuiltPlan> built;
  frenzy::TimelineScore score;
  if (rescoreCount > 0 && timelineScores(cluster)) {
    built.emplace();
    if (int rc = buildFor(r, *planned, base, options, cluster, true, *built))
      return rc;
    score.stepSeconds = built->timeline.stepSeconds;
    if (layoutSpec.empty()) {
      auto rec = frenzy::readPartition(*planned);
      std::string chosen =
          succeeded(rec) && *rec ? frenzy::formatLayout((*rec)->plan) : "";
      score.candidates.push_back({chosen, score.stepSeconds});
      std::vector<frenzy::Alternative> explained =
          frenzy::readAlternatives(*planned);
      for (const std::string &spec :
           searchedLayouts(*planned, cluster, size_t(rescoreCount))) {
        if (spec == chosen)
          continue;
        // A shape that does not build (it should) just loses, quietly.
        ScopedDiagnosticHandler quiet(&r.context,
                                      [](Diagnostic &) { return success(); });
        OwningOpRef<ModuleOp> other = plannedModule(r, base, spec);
        auto next = std::make_optional<BuiltPlan>();
        if (!other || buildFor(r, *other, base, options, cluster, true, *next) ||
            !next->played)
          continue;
        score.candidates.push_back({spec, next->timeline.stepSeconds});
        if (next->timeline.stepSeconds < score.stepSeconds * (1 - 1e-9)) {
          frenzy::recordAlternatives(*other, explained);
          planned = std::move(other);
          built = std::move(next);
          score.stepSeconds = built->timeline.stepSeconds;
        }
      }
      std::stable_sort(score.candidates.begin(), score.candidates.end(),
                       [](const auto &a, const auto &b) {
                         return a.second < b.second;
                       });
    }
    if (!built->played)
      built.reset(); // too many ranks to play: the search's estimate stands
  }
  if (report)
    if (int rc = printPartition(*planned, cluster, built ? &score : nullptr);
        rc || mode.partitioning)
      return rc;
  if (emitKind == "plan-mlir")
    return printStepFor(r, *planned, base, options, output);
  if (!built) {
    built.emplace();
    if (int rc = buildFor(r, *planned, base, options, cluster, false, *built))
      return rc;
  }
  return emitBuiltPlan(*built, cluster, output);
}

static int runOnModel(llvm::StringRef input, llvm::StringRef output,
                      DialectRegistry &registry,
                      const MlirOptMainConfig &config) {
  MLIRContext context(registry);
  printDiagnosticsPlainly(context);
  std::optional<frenzy::OnnxImportOptions> options = importOptions();
  std::optional<Mode> mode = modeFor(input, output);
  if (!options || !mode)
    return 1;

  // The cluster first: its errors should not wait for a large import.
  std::optional<frenzy::ClusterSpec> cluster;
  if (mode->planning) {
    auto read = frenzy::readClusterFile(clusterFile);
    if (!read) {
      llvm::errs() << "frenzy-opt: error: " << llvm::toString(read.takeError())
                   << "\n";
      return 1;
    }
    cluster = std::move(*read);
  }
  // A multi-device plan is partitioned on the step at batch 1 (the memory
  // and cost models scale from it), then compiled at the micro-batch size.
  // So is a one-device plan for a --global-batch: the partitioner picks its
  // micro-batch and accumulation steps exactly as on a larger cluster.
  bool partitioning =
      mode->partitioning ||
      (mode->emitPlan && (cluster->totalDevices() > 1 || globalBatch > 0));
  if (mode->predict || partitioning || mode->jobOptions)
    options->batch = 1;

  ModelRun r{input, context, config};
  OwningOpRef<ModuleOp> module = r.import(*options);
  if (!module)
    return 1;
  if (partitioning)
    return planAndWrite(r, *module, *options, *mode, *cluster, output);
  if (mode->planning) {
    module = r.training(*module, 1);
    if (!module)
      return 1;
    if (mode->predict)
      return predict(*module, *cluster, input);
    if (mode->jobOptions)
      return frenzy::writeJobOptions(*module, *cluster, partitionOptions(),
                                     input, output);
    if (mode->emitPlan)
      return writePlan(*module, {}, input, *cluster, output);
    // --emit=mlir|summary with --cluster: the training step itself.
  } else if (failed(r.run(*module, [](OpPassManager &) {}))) {
    return 1;
  }

  auto out = openOutput(output);
  if (!out)
    return 1;
  if (emitKind == "summary")
    frenzy::printSummary(frenzy::summarize(*module), out->os());
  else
    module->print(out->os(), OpPrintingFlags());
  out->keep();
  return 0;
}

/// mlir-opt's registration and parse (registerAndParseCLIOptions), with
/// every option that is not frenzy-opt's hidden from --help (ToolHelp.h):
/// MLIR's driver, printer and pass-manager flags and the pass list stay
/// available and are listed by --help-hidden.
static std::pair<std::string, std::string>
parseCommandLine(int argc, char **argv, DialectRegistry &registry) {
  static cl::opt<std::string> input(cl::Positional, cl::desc("<input file>"),
                                    cl::init("-"));
  static cl::opt<std::string> output("o", cl::desc("Output filename"),
                                     cl::value_desc("filename"),
                                     cl::init("-"));
  MlirOptMainConfig::registerCLOptions(registry);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  tracing::DebugCounter::registerCLOptions();
  frenzy::hideForeignOptions(frenzy::driver::optionCategories(), {"o"});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Frenzy compiler: ONNX model -> training plan (frenzy-opt MODEL.onnx "
      "--cluster=C.yaml -o plan.bin), or an mlir-opt-style driver of the "
      "frenzy passes on .mlir input; --help-hidden lists the passes and "
      "MLIR's own options\n");
  return {input.getValue(), output.getValue()};
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  frenzy::registerAllPasses();
  frenzy::test::registerTestPasses();

  auto [input, output] = parseCommandLine(argc, argv, registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  if (frenzy::isOnnxPath(input))
    return runOnModel(input, output, registry, config);

  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
    return 1;
  }
  auto out = openOutput(output);
  if (!out)
    return 1;
  if (failed(MlirOptMain(out->os(), std::move(file), registry, config)))
    return 1;
  out->keep();
  return 0;
}
