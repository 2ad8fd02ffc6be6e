//===- Outputs.cpp - what frenzy-opt prints and writes for a model --------===//
//
// Everything here reads what the passes recorded in the IR (the partition,
// the schedule) or the models built from it; nothing decides anything.
//
//===----------------------------------------------------------------------===//
#include "Outputs.h"

#include "DriverOptions.h"

#include "frenzy/Dialect/Frenzy/IR/Precision.h"
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/Dialect/Frenzy/Transforms/SideTaskAttrs.h"
#include "frenzy/Planning/LayoutSpec.h"
#include "frenzy/Target/Plan/PlanWriter.h"
#include "frenzy/Planning/ResourcePrediction.h"
#include "frenzy/Planning/TimelineSimulation.h"
#include "plan.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace frenzy::driver {

std::unique_ptr<llvm::ToolOutputFile> openOutput(StringRef output) {
  std::string error;
  auto out = openOutputFile(output, &error);
  if (!out)
    llvm::errs() << "frenzy-opt: error: " << error << "\n";
  return out;
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

void printDiagnosticsPlainly(MLIRContext &context) {
  context.getDiagEngine().registerHandler([](Diagnostic &diag) {
    auto &os = llvm::errs();
    // Locations and messages name model tensors, which may hold any bytes.
    std::string where = oneLine(describe(diag.getLocation()));
    if (!where.empty())
      os << where << ": ";
    os << (diag.getSeverity() == DiagnosticSeverity::Error     ? "error: "
           : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning: "
                                                               : "note: ")
       << oneLine(diag.str()) << "\n";
    return success();
  });
}

/// --predict-resources: the memory model of the training step against every
/// GPU type of the cluster.
int predict(ModuleOp module, const ClusterSpec &cluster,
            llvm::StringRef input) {
  auto model = MemoryModel::build(module, std::nullopt);
  if (failed(model))
    return 1;
  PredictOptions po;
  po.globalBatch = predictGlobalBatch();
  auto pred = frenzy::predictResources(*model, cluster, po);
  if (!pred) {
    llvm::errs() << "frenzy-opt: error: " << clusterFile << ": "
                 << llvm::toString(pred.takeError()) << "\n";
    return 1;
  }
  if (emitJson)
    printPredictionJson(*pred, *model, po, llvm::outs());
  else {
    llvm::outs() << input << ": ";
    printPrediction(*pred, *model, po, llvm::outs());
  }
  llvm::outs().flush();
  // Nothing fits anywhere: say by how much.
  const TypePrediction *largest = nullptr;
  int64_t need = INT64_MAX;
  for (const TypePrediction &p : *pred) {
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
               << llvm::formatv("{0:f1}", double(largest->gpu.memoryBytes) /
                                              double(1ll << 30))
               << " GiB; add GPUs, use a smaller global batch or sequence\n";
  return 1;
}

/// The bubbles of the module's schedule: all of them (--emit=bubbles) or
/// the per-stage summary (--emit=report), and the side tasks' harvest.
static int printBubbles(ModuleOp module, bool all, bool searchTimes = false) {
  auto mb = analyzeModuleBubbles(module, clusterFile, "frenzy-opt");
  if (failed(mb))
    return 1;
  if (all) {
    bubbles::print(mb->problem, mb->analysis, llvm::outs());
  } else {
    // Beside a timeline-scored step the bubbles still come from the
    // search's stage times: say so, so two steps do not read as one.
    llvm::outs() << llvm::formatv("bubbles ({0}, predicted per step of "
                                  "{1:f3} ms{2}):\n",
                                  mb->problem.kind,
                                  mb->analysis.stepSeconds * 1e3,
                                  searchTimes ? " from the search's stage "
                                                "times"
                                              : "");
    bubbles::printSummary(mb->problem, mb->analysis, llvm::outs());
  }
  auto side = readSideTasks(module);
  if (failed(side))
    return 1;
  if (*side) {
    llvm::outs() << llvm::formatv("side tasks: harvested {0:f3} GPU-ms per "
                                  "step in {1} slot(s)\n",
                                  (*side)->gpuSeconds * 1e3,
                                  (*side)->slots.size());
    for (const RecordedSideTask &t : (*side)->tasks)
      llvm::outs() << llvm::formatv(
          "  {0} ({1}): {2}\n", t.name, t.kind,
          t.gpuSeconds > 0
              ? llvm::formatv("{0} step(s), {1:f3} GPU-ms{2}{3}",
                              t.placedSteps, t.gpuSeconds * 1e3,
                              t.why.empty() ? "" : "; ", t.why)
                    .str()
              : "not placed: " + t.why);
  }
  return 0;
}

int printPartition(ModuleOp module, const ClusterSpec &cluster,
                   const TimelineScore *timeline) {
  auto rec = readPartition(module);
  if (failed(rec) || !*rec)
    return 1;
  // The report's tokens/s and MFU need the step's FLOPs: the cost model of
  // the same module the partition was made on (at the module's precision,
  // as the pass built it; the memory model is not needed again).
  auto cost = CostModel::build(module, getPrecision(module));
  if (failed(cost))
    return 1;
  const PartitionPlan &plan = (*rec)->plan;
  const PartitionOptions &po = (*rec)->options;
  if (emitKind == "bubbles")
    return printBubbles(module, true);
  if (emitKind == "json") {
    printPlanJson(plan, cluster, *cost, po, llvm::outs(), timeline);
    return 0;
  }
  printPlanReport(plan, cluster, *cost, po, llvm::outs(), timeline);
  if (int rc = printBubbles(module, false, timeline != nullptr))
    return rc;
  if (explainPlan) {
    std::vector<Alternative> alternatives = readAlternatives(module);
    llvm::outs() << "alternatives considered (" << alternatives.size()
                 << "), fastest first:\n";
    size_t shown = 0;
    for (const Alternative &a : alternatives) {
      if (++shown > 25)
        break;
      llvm::outs() << llvm::formatv("  {0,8:f1} ms  {1}  [{2}]\n",
                                    a.stepSeconds * 1e3, a.description, a.why);
    }
  }
  return 0;
}

bool timelineScores(const ClusterSpec &cluster) {
  if (cluster.nodes.empty())
    return false;
  for (const ClusterNode &n : cluster.nodes) {
    const GpuType *g = cluster.gpuType(n.gpu);
    if (!g || !g->profile || !g->profile->calibrated)
      return false;
  }
  return true;
}

std::vector<std::string> searchedLayouts(ModuleOp planned,
                                         const ClusterSpec &cluster,
                                         size_t count) {
  std::vector<std::string> specs;
  auto rec = readPartition(planned);
  if (failed(rec) || !*rec)
    return specs;
  // The models the partition pass searched with: the same module, at its
  // precision.
  auto memory = MemoryModel::build(planned, std::nullopt);
  if (failed(memory))
    return specs;
  auto cost = CostModel::build(planned, memory->precision());
  if (failed(cost))
    return specs;
  std::vector<PartitionPlan> best;
  auto chosen = partition(*cost, *memory, cluster, (*rec)->options, nullptr,
                          &best, count);
  if (!chosen) {
    llvm::consumeError(chosen.takeError());
    return specs;
  }
  for (const PartitionPlan &c : best) {
    std::string spec = formatLayout(c);
    // A spec places stages in cluster order: keep the shape only where
    // that is where the search put it (one node's CPU ranks, say).
    auto parsed = parseLayout(spec, cluster, cost->numLayers(),
                              (*rec)->options.globalBatch);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      continue;
    }
    bool same = parsed->pipelines.size() == c.pipelines.size();
    for (size_t q = 0; same && q < c.pipelines.size(); ++q) {
      const auto &a = parsed->pipelines[q].stages, &b = c.pipelines[q].stages;
      same = a.size() == b.size();
      for (size_t s = 0; same && s < a.size(); ++s)
        same = a[s].node == b[s].node && a[s].devices == b[s].devices;
    }
    if (same && !llvm::is_contained(specs, spec))
      specs.push_back(spec);
  }
  return specs;
}

/// --emit=trace: the plan's predicted timeline instead of plan.bin.
static int writeTrace(const BuiltPlan &built, const ClusterSpec &cluster,
                      llvm::StringRef output) {
  const plan::Plan &plan = built.plan;
  PredictedTimeline t =
      built.played ? built.timeline : simulateTimeline(plan, cluster);
  auto out = openOutput(output);
  if (!out)
    return 1;
  writePredictedTrace(plan, t, out->os());
  out->keep();
  llvm::errs() << llvm::formatv("frenzy-opt: predicted timeline of {0} "
                                "rank(s), step {1:f2} ms, written to {2}\n",
                                t.rankSeconds.size(), t.stepSeconds * 1e3,
                                output);
  return 0;
}

/// --emit=plan-mlir: the module the plan translation reads, for
/// frenzy-translate --mlir-to-frenzy-plan (one program: one TP degree).
int printPlanModule(ModuleOp module, ArrayRef<ModuleOp> more,
                    StringRef output) {
  if (!more.empty()) {
    llvm::errs() << "frenzy-opt: error: --emit=plan-mlir prints one module, "
                    "but this plan's pipelines run "
                 << more.size() + 1
                 << " TP degrees (one program each); use a layout with one "
                    "TP degree\n";
    return 1;
  }
  auto out = openOutput(output);
  if (!out)
    return 1;
  // With locations: an instruction names its ONNX node from its op's.
  module->print(out->os(), OpPrintingFlags().enableDebugInfo());
  out->keep();
  return 0;
}

int buildPlanOf(ModuleOp module, ArrayRef<ModuleOp> more, StringRef input,
                const ClusterSpec &cluster, bool play, BuiltPlan &out) {
  plan::Plan &plan = out.plan;
  // The one translation to plan.bin (lib/Target/Plan, docs/plan.md): each
  // action's predicted seconds are computed there, before the write.
  if (failed(buildPlan(module, more, input, clusterFile, cluster, plan)))
    return 1;
  // The plan's predicted step is then the timeline's (what --emit=trace
  // prints), not the search's estimate. Plans of more ranks are not played
  // (the simulation grows with ranks squared).
  out.played = play && plan.ranks_size() <= 4096;
  if (out.played) {
    out.timeline = simulateTimeline(plan, cluster);
    plan.set_predicted_step_seconds(out.timeline.stepSeconds);
  }
  return 0;
}

int writePlan(ModuleOp module, ArrayRef<ModuleOp> more, StringRef input,
              const ClusterSpec &cluster, StringRef output) {
  if (emitKind == "plan-mlir")
    return printPlanModule(module, more, output);
  BuiltPlan built;
  if (int rc = buildPlanOf(module, more, input, cluster,
                           timelineScores(cluster), built))
    return rc;
  return emitBuiltPlan(built, cluster, output);
}

int emitBuiltPlan(const BuiltPlan &built, const ClusterSpec &cluster,
                  StringRef output) {
  const plan::Plan &plan = built.plan;
  if (emitKind == "trace")
    return writeTrace(built, cluster, output);
  if (llvm::Error e = writePlanFile(plan, output)) {
    llvm::errs() << "frenzy-opt: error: " << llvm::toString(std::move(e))
                 << "\n";
    return 1;
  }
  llvm::errs() << "frenzy-opt: wrote " << output << " ("
               << plan.program().instrs_size() << " instructions, "
               << plan.program().params_size() << " parameters, "
               << plan.program().tensors_size() << " tensors";
  if (plan.stages_size())
    llvm::errs() << ", " << plan.ranks_size() << " ranks in "
                 << plan.stages_size() << " stages";
  llvm::errs() << ")\n";
  return 0;
}

} // namespace frenzy::driver
