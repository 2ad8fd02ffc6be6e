//===- DriverOptions.h - frenzy-opt's command line ---------------*- C++
//-*-===//
//
// The flags of a model run (.onnx input), what they ask for (a Mode), and
// their translation into the named pipelines' options. Kept apart from the
// driver so frenzy-opt.cpp is only the order of steps.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_OPT_DRIVEROPTIONS_H
#define FRENZY_OPT_DRIVEROPTIONS_H

#include "frenzy/Dialect/Frenzy/Transforms/Pipelines.h"
#include "frenzy/Import/OnnxImporter.h"
#include "frenzy/Planning/Partitioner.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <vector>

namespace frenzy::driver {

extern llvm::cl::opt<int64_t> batchSize, seqLength, globalBatch, warmupSteps,
    totalSteps, rescoreCount;
extern llvm::cl::list<std::string> dimBindings;
extern llvm::cl::opt<std::string> emitKind, clusterFile, lossKind,
    optimizerKind, recomputeMode, layoutSpec, scheduleKind, precision,
    sideTaskFile;
extern llvm::cl::opt<bool> noDefaultPipeline, predictResources, explainPlan,
    emitJson, inferenceOnly, sequenceParallel;
extern llvm::cl::opt<double> learningRate, minLearningRate, weightDecay,
    clipNorm, momentum;

/// What a model run produces.
struct Mode {
  bool planning = false;      // --cluster given
  bool predict = false;       // --predict-resources
  bool partitioning = false;  // --emit=report|json without -o: print only
  bool reportAndPlan = false; // --emit=report -o plan.bin
  bool emitTrace = false;     // --emit=trace: the plan's predicted timeline
  bool emitPlanMlir = false;  // --emit=plan-mlir: the module it is built from
  bool emitPlan = false;      // a plan (plan.bin or its trace) is built
  bool jobOptions = false;    // --emit=job-options: frenzy-sched's table
};

/// The mode the flags ask for; one error line and nullopt when they
/// contradict each other or name unknown values.
/// frenzy-opt's own option categories (what --help shows).
std::vector<const llvm::cl::OptionCategory *> optionCategories();

std::optional<Mode> modeFor(llvm::StringRef input, llvm::StringRef output);

/// --batch, --seq, --dim, --frozen and --trainable as import options; one
/// error line and nullopt on a malformed --dim.
std::optional<OnnxImportOptions> importOptions();

/// The training flags into either pipeline's options.
template <typename Self> void fillTraining(TrainingOptionsBase<Self> &o) {
  o.inference = inferenceOnly.getValue();
  o.loss = lossKind.getValue();
  o.optimizer = optimizerKind.getValue();
  o.lr = learningRate.getValue();
  o.minLr = minLearningRate.getValue();
  o.warmupSteps = warmupSteps.getValue();
  o.totalSteps = totalSteps.getValue();
  o.weightDecay = weightDecay.getValue();
  o.clipNorm = clipNorm.getValue();
  o.momentum = momentum.getValue();
  o.precision = precision.getValue();
}

/// The partitioner's options from the flags (modeFor checked them).
PartitionOptions partitionOptions();

/// --sequence-parallel as the partition's mode: on, off, or auto (not
/// given, no --layout: the planner's choice).
llvm::StringRef sequenceParallelMode();

/// The partition flags: global batch (--global-batch, else --batch, else
/// 8), sequence (--seq, else 1024), recompute, layout, explain, schedule.
void fillPlan(PlanPipelineOptions &o);

/// The global batch --predict-resources plans for (else --batch, else 1).
int64_t predictGlobalBatch();

} // namespace frenzy::driver

#endif
