//===- ImportFlags.cpp - frenzy-opt flags that shape an ONNX import -------===//
#include "ImportFlags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::OptionCategory
    importCategory("Frenzy import: symbolic dims and trainable weights");

static cl::list<std::string>
    dimBindings("dim", cl::desc("Bind a symbolic dim by name: NAME=VALUE"),
                cl::cat(importCategory));
static cl::list<std::string> frozenWeights(
    "frozen",
    cl::desc("Weights to keep fixed (buffers), by name or glob pattern, "
             "comma-separated: --frozen='*.rotary.*,lm_head.weight'"),
    cl::CommaSeparated, cl::cat(importCategory));
static cl::list<std::string> trainableWeights(
    "trainable",
    cl::desc("Weights to train although the graph reads them as position "
             "tables (rotary caches), by name or glob pattern"),
    cl::CommaSeparated, cl::cat(importCategory));

bool frenzy::opt::addImportFlags(OnnxImportOptions &options) {
  for (const std::string &binding : dimBindings) {
    auto [name, value] = llvm::StringRef(binding).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v <= 0) {
      llvm::errs() << "frenzy-opt: error: --dim expects NAME=VALUE with a "
                      "positive VALUE, got '"
                   << binding << "'\n";
      return false;
    }
    options.dims[name] = v;
  }
  options.frozen.assign(frozenWeights.begin(), frozenWeights.end());
  options.trainable.assign(trainableWeights.begin(), trainableWeights.end());
  return true;
}
