//===- PlanTranslation.cpp - mlir-to-frenzy-plan --------------------------===//
//
// buildPlan registered as a translation, the way mlir-translate's targets
// are (TranslateFromMLIRRegistration): a .mlir module, partitioned or not,
// becomes plan.bin. The parser has run the dialect's verifiers by then, so
// an inconsistent layout is refused with its location before anything is
// built, and the tool keeps no output file on failure. The model file (for
// the plan's identity hash) defaults to the module's frenzy.source, the
// cluster to the one frenzy.layout was made for.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Target/Plan/PlanWriter.h"

#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/InitAll.h"
#include "plan.pb.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace frenzy;

namespace {
llvm::cl::OptionCategory &planCategory() {
  static llvm::cl::OptionCategory c("Frenzy plan translation options");
  return c;
}
llvm::cl::opt<std::string> &modelOption() {
  static llvm::cl::opt<std::string> o(
      "plan-model",
      llvm::cl::desc("the ONNX model the plan's parameters come from "
                     "(default: the module's frenzy.source)"),
      llvm::cl::value_desc("file"), llvm::cl::cat(planCategory()));
  return o;
}
llvm::cl::opt<std::string> &clusterOption() {
  static llvm::cl::opt<std::string> o(
      "plan-cluster",
      llvm::cl::desc("the cluster YAML (default: the one frenzy.layout was "
                     "made for)"),
      llvm::cl::value_desc("file"), llvm::cl::cat(planCategory()));
  return o;
}
} // namespace

static LogicalResult translateToPlan(ModuleOp module, llvm::raw_ostream &os) {
  std::string model = modelOption();
  if (model.empty())
    if (auto src = module->getAttrOfType<StringAttr>("frenzy.source"))
      model = src.str();
  if (model.empty())
    return module.emitError("no model file: the module has no frenzy.source; "
                            "give --plan-model=FILE");
  auto rec = readPartition(module);
  if (failed(rec))
    return failure();
  std::string clusterPath = clusterOption();
  if (clusterPath.empty() && *rec)
    clusterPath = (*rec)->clusterPath;
  if (clusterPath.empty())
    return module.emitError("no cluster: the module has no frenzy.layout; "
                            "give --plan-cluster=FILE");
  auto cluster = readClusterFile(clusterPath);
  if (!cluster)
    return module.emitError(llvm::toString(cluster.takeError()));
  plan::Plan plan;
  if (failed(buildPlan(module, {}, model, clusterPath, *cluster, plan)))
    return failure();
  auto bytes = encodePlan(plan);
  if (!bytes)
    return module.emitError(llvm::toString(bytes.takeError()));
  os << *bytes;
  return success();
}

void frenzy::registerToPlanTranslation() {
  modelOption();
  clusterOption();
  static TranslateFromMLIRRegistration registration(
      "mlir-to-frenzy-plan",
      "a training module (partitioned or not) as plan.bin for frenzy-launch",
      translateToPlan,
      [](DialectRegistry &registry) { registerAllDialects(registry); });
}

const llvm::cl::OptionCategory *frenzy::planTranslationCategory() {
  return &planCategory();
}
