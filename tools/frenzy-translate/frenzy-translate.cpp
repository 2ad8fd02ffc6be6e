//===- frenzy-translate.cpp - translations out of the Frenzy IR -----------===//
//
// mlir-translate for Frenzy: `frenzy-translate --mlir-to-frenzy-plan
// module.mlir -o plan.bin` runs the plan translation (lib/Target/Plan) on
// a .mlir file, which is how the writer is tested without an ONNX import.
// Diagnostics are one line each ("file:line:col: error: ..."), and the
// output file is only created once the translation has succeeded.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Support/ToolHelp.h"
#include "frenzy/Target/Plan/PlanWriter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory toolCategory("frenzy-translate options");

/// "file:line:col: " for a location, or "" when it has none.
static std::string where(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().str() + ":" + std::to_string(f.getLine()) + ":" +
            std::to_string(f.getColumn()) + ": ");
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return where(fused.getLocations().front());
  if (auto n = dyn_cast<NameLoc>(loc))
    return where(n.getChildLoc());
  return "";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  frenzy::registerToPlanTranslation();
  static cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir>"),
                                    cl::init("-"), cl::cat(toolCategory));
  static cl::opt<std::string> output("o", cl::desc("Output filename"),
                                     cl::value_desc("filename"),
                                     cl::init("-"), cl::cat(toolCategory));
  static cl::opt<const Translation *, false, TranslationParser> translation(
      cl::desc("Translation to perform"), cl::Required,
      cl::cat(toolCategory));
  frenzy::hideForeignOptions({&toolCategory, frenzy::planTranslationCategory()},
                             {"o"});
  cl::ParseCommandLineOptions(argc, argv,
                              "Frenzy translations: a .mlir module to the "
                              "runtime's plan (frenzy-translate "
                              "--mlir-to-frenzy-plan in.mlir -o plan.bin)\n");

  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "frenzy-translate: error: " << error << "\n";
    return 1;
  }
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  MLIRContext context;
  context.getDiagEngine().registerHandler([](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Note)
      return success();
    std::string msg = diag.str();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    llvm::errs() << where(diag.getLocation())
                 << (diag.getSeverity() == DiagnosticSeverity::Error
                         ? "error: "
                         : "warning: ")
                 << msg << "\n";
    return success();
  });
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed((*translation)(sourceMgr, os, &context)))
    return 1;
  os.flush();
  auto out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "frenzy-translate: error: " << error << "\n";
    return 1;
  }
  out->os() << bytes;
  out->keep();
  return 0;
}
