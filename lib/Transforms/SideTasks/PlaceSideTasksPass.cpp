//===- PlaceSideTasksPass.cpp - the frenzy-place-side-tasks pass ----------===//
//
// A thin shell like frenzy-partition: it reads the partition, schedule and
// cluster from the IR, runs the bubble analysis, reads the side-task file,
// prices each task's step on each stage's GPU type (the measured seconds
// the file gives, else the cost model's roofline of its flops and bytes on
// the type's profile), calls the MLIR-free greedy solver, verifies what it
// returns, and records the slots in the IR.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Cluster/DeviceProfile.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Dialect/Frenzy/Transforms/SideTaskAttrs.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYPLACESIDETASKS
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {

/// Seconds of one step of `task` on `gpu`: measured, else the roofline.
std::optional<double> stepSecondsOn(const sidetasks::SideTask &task,
                                    const std::string &gpu,
                                    const ClusterSpec &cluster) {
  auto it = task.secondsOn.find(gpu);
  if (it != task.secondsOn.end())
    return it->second;
  if (task.flops <= 0 && task.bytes <= 0)
    return std::nullopt;
  const GpuType *g = cluster.gpuType(gpu);
  if (!g)
    return std::nullopt;
  DeviceProfile p = g->profile ? *g->profile : DeviceProfile::fromDatasheet(*g);
  double s = p.kernelSeconds(KernelKind::Contraction, task.flops, task.bytes);
  if (!(s > 0))
    return std::nullopt;
  return s;
}

struct FrenzyPlaceSideTasksPass
    : frenzy::impl::FrenzyPlaceSideTasksBase<FrenzyPlaceSideTasksPass> {
  using FrenzyPlaceSideTasksBase::FrenzyPlaceSideTasksBase;

  void runOnOperation() override {
    if (failed(run(getOperation())))
      signalPassFailure();
  }

  LogicalResult run(ModuleOp module) {
    if (sideTasks.empty())
      return emitError(module.getLoc(),
                       "frenzy-place-side-tasks needs side-tasks=FILE (the "
                       "side-task YAML, docs/sidetasks.md)");
    if (!(memoryMargin >= 0 && memoryMargin < 1 && timeMargin >= 0 &&
          timeMargin < 1))
      return emitError(module.getLoc(),
                       "frenzy-place-side-tasks: memory-margin and "
                       "time-margin must be in [0, 1)");
    auto tasks = sidetasks::readSideTaskFile(sideTasks);
    if (!tasks)
      return emitError(module.getLoc(), llvm::toString(tasks.takeError()));
    auto mb = analyzeModuleBubbles(module, cluster, "frenzy-place-side-tasks");
    if (failed(mb))
      return failure();
    sidetasks::PlacementProblem pr;
    pr.schedule = &mb->problem;
    pr.analysis = &mb->analysis;
    pr.tasks = std::move(*tasks);
    pr.memoryMargin = memoryMargin;
    pr.timeMargin = timeMargin;
    for (const sidetasks::SideTask &t : pr.tasks) {
      auto &perPipeline = pr.stepSeconds.emplace_back();
      for (const auto &pipe : mb->problem.pipelines) {
        auto &perStage = perPipeline.emplace_back();
        for (const bubbles::Stage &st : pipe)
          perStage.push_back(stepSecondsOn(t, st.gpu, mb->cluster));
      }
    }
    if (llvm::Error e = pr.check())
      return emitError(module.getLoc())
             << "frenzy-place-side-tasks: " << llvm::toString(std::move(e));
    sidetasks::Placement placement = sidetasks::placeGreedy(pr);
    if (llvm::Error e = sidetasks::verify(pr, placement))
      return emitError(module.getLoc())
             << "frenzy-place-side-tasks: the placement is invalid (a solver "
                "bug): "
             << llvm::toString(std::move(e));
    recordSideTasks(module, pr, placement);
    sidetasks::printPlacement(pr, placement, llvm::errs());
    return success();
  }
};
} // namespace
