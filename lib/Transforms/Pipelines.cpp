//===- Pipelines.cpp - Frenzy's named pass pipelines ----------------------===//
//
// The driver and `--pass-pipeline` users build the same pass lists from
// here, so what frenzy-opt does to a model can be replayed on .mlir input.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/Pipelines.h"

#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Planning/LayoutSpec.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace frenzy;

template <typename Self>
static void addTraining(OpPassManager &pm, const TrainingOptionsBase<Self> &o,
                        int64_t tpDegree, bool sequenceParallel = false) {
  if (tpDegree > 1) {
    FrenzyTensorParallelOptions tp;
    tp.degree = tpDegree;
    tp.sequenceParallel = sequenceParallel;
    pm.addPass(createFrenzyTensorParallel(tp));
  }
  if (o.inference) {
    pm.addPass(createFrenzyEvalMode());
    return;
  }
  FrenzyAutodiffOptions ad;
  ad.loss = o.loss;
  pm.addPass(createFrenzyAutodiff(ad));
  if (o.optimizer != "none") {
    FrenzyOptimizerOptions opt;
    opt.kind = o.optimizer;
    opt.lr = o.lr;
    opt.minLr = o.minLr;
    opt.warmupSteps = o.warmupSteps;
    opt.totalSteps = o.totalSteps;
    opt.weightDecay = o.weightDecay;
    opt.clipNorm = o.clipNorm;
    opt.momentum = o.momentum;
    pm.addPass(createFrenzyOptimizer(opt));
  }
  FrenzyPrecisionOptions prec;
  prec.policy = o.precision;
  pm.addPass(createFrenzyPrecision(prec));
}

void frenzy::buildTrainingPipeline(OpPassManager &pm,
                                   const TrainingPipelineOptions &o) {
  addTraining(pm, o, o.tpDegree, o.sequenceParallel);
}

void frenzy::buildPlanPipeline(OpPassManager &pm,
                               const PlanPipelineOptions &o) {
  // The partition is searched on the unsplit step: TP is its decision,
  // among the degrees the forward graph can be split for (checked here,
  // before autodiff).
  std::vector<int64_t> degrees = plan::PlanProblem().tpDegrees;
  for (int64_t d : layoutTpDegrees(o.layout))
    degrees.push_back(d);
  FrenzyTpCheckOptions check;
  check.degrees = degrees;
  pm.addPass(createFrenzyTpCheck(check));
  addTraining(pm, o, 1);
  FrenzyPartitionOptions part;
  part.cluster = o.cluster;
  part.globalBatch = o.globalBatch;
  part.seq = o.seq;
  part.recompute = o.recompute;
  part.schedule = o.schedule;
  part.layout = o.layout;
  part.sequenceParallel = o.sequenceParallel;
  part.explain = o.explain;
  pm.addPass(createFrenzyPartition(part));
  FrenzyPipelineScheduleOptions sched;
  sched.kind = o.schedule;
  pm.addPass(createFrenzyPipelineSchedule(sched));
  if (!o.sideTasks.empty()) {
    FrenzyPlaceSideTasksOptions side;
    side.sideTasks = o.sideTasks;
    pm.addPass(createFrenzyPlaceSideTasks(side));
  }
}

void frenzy::registerFrenzyPipelines() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "frenzy-training",
      "The training step: [tensor-parallel], autodiff, optimizer, precision",
      buildTrainingPipeline);
  PassPipelineRegistration<PlanPipelineOptions>(
      "frenzy-plan",
      "The training step at batch 1, partitioned over a cluster and "
      "scheduled (frenzy-training, frenzy-partition, "
      "frenzy-pipeline-schedule[, frenzy-place-side-tasks])",
      buildPlanPipeline);
}
