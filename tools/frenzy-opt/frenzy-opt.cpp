//===- frenzy-opt.cpp - the Frenzy compiler driver ------------------------===//
//
// With a .mlir input it behaves exactly like mlir-opt (pass flags,
// -split-input-file, -verify-diagnostics). With an .onnx/.onnxtext input it
// imports the model, runs the default pipeline (fuse, annotate blocks) plus
// any passes given on the command line, and emits what --emit asks for.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Summary/ModelSummary.h"
#include "frenzy/Import/OnnxImporter.h"
#include "frenzy/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
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
    emitKind("emit", cl::desc("What to print for a model: mlir or summary"),
             cl::init("mlir"), cl::cat(frenzyCategory));
static cl::opt<bool>
    noDefaultPipeline("no-default-pipeline",
                      cl::desc("Import only: skip fusion and block annotation"),
                      cl::init(false), cl::cat(frenzyCategory));

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
  if (emitKind != "mlir" && emitKind != "summary") {
    llvm::errs() << "frenzy-opt: error: --emit must be 'mlir' or 'summary', "
                    "got '"
                 << emitKind << "'\n";
    return 1;
  }

  OwningOpRef<ModuleOp> module =
      frenzy::importOnnxFile(input, options, &context);
  if (!module || failed(verify(*module)))
    return 1;

  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  if (!noDefaultPipeline) {
    pm.addPass(frenzy::createFrenzyFusePatterns());
    pm.addPass(frenzy::createFrenzyAnnotateBlocks());
  }
  if (failed(config.setupPassPipeline(pm)) || failed(pm.run(*module)))
    return 1;

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
