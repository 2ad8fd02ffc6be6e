//===- ImportHarness.h - fuzz the ONNX importer on arbitrary bytes -*- C++ -*-===//
//
// Shared by the binary (.onnx) and text (.onnxtext) harnesses: the bytes
// become a model file, which frenzy-opt's import path reads at --batch=2
// --seq=8 and, when it imports, runs the default pipeline (fusion, block
// annotation) and the summary on. What counts as a bug besides a crash,
// hang or sanitizer report: a failed import with no error or with more
// than one, an error message of more than one line, or a module that fails
// verification (the importer must only build valid IR).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_FUZZ_COMPILER_IMPORTHARNESS_H
#define FRENZY_FUZZ_COMPILER_IMPORTHARNESS_H

#include "../runtime/FuzzInputFile.h"

#include "frenzy/Analysis/Summary/ModelSummary.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Import/OnnxImporter.h"
#include "frenzy/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

namespace frenzy::fuzz {

/// Errors reported through the context since the last clear.
inline std::vector<std::string> &reportedErrors() {
  static std::vector<std::string> errors;
  return errors;
}

/// One context for the whole run: creating one per input would dominate.
inline mlir::MLIRContext &fuzzContext() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->disableMultithreading();
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
        reportedErrors().push_back(d.str());
      return mlir::success();
    });
    return c;
  }();
  return *ctx;
}

[[noreturn]] inline void finding(const char *what, const std::string &detail) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

inline int fuzzImport(const uint8_t *data, size_t size, const char *extension) {
  std::string path = scratchDir() + "/model" + extension;
  writeFile(path, data, size);
  mlir::MLIRContext &ctx = fuzzContext();
  reportedErrors().clear();
  OnnxImportOptions options;
  options.batch = 2;
  options.seq = 8;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxFile(path, options, &ctx);
  for (const std::string &e : reportedErrors())
    if (e.find('\n') != std::string::npos)
      finding("an error of several lines", e);
  if (!module) {
    if (reportedErrors().size() != 1)
      finding("a failed import reported this many errors",
              std::to_string(reportedErrors().size()));
    return 0;
  }
  if (!reportedErrors().empty())
    finding("an import that succeeded reported an error",
            reportedErrors().front());
  if (mlir::failed(mlir::verify(*module)))
    finding("the importer built invalid IR",
            reportedErrors().empty() ? "" : reportedErrors().front());
  mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
  pm.addPass(createFrenzyFusePatterns());
  pm.addPass(createFrenzyAnnotateBlocks());
  if (mlir::succeeded(pm.run(*module))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    printSummary(summarize(*module), os);
  }
  return 0;
}

} // namespace frenzy::fuzz

#endif
