//===- ModelSummary.h - parameter, block and FLOP totals of a model -*- C++ -*-===//
#ifndef FRENZY_ANALYSIS_SUMMARY_MODELSUMMARY_H
#define FRENZY_ANALYSIS_SUMMARY_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace frenzy {

struct BlockTotals {
  int64_t params = 0; // trainable elements first used in this block
  int64_t flops = 0;  // forward flops of one step
  int64_t ops = 0;
};

struct ModelSummary {
  std::string source;
  int64_t opset = 0;
  int64_t numBlocks = 0;
  int64_t trainableParams = 0, trainableTensors = 0;
  int64_t bufferElements = 0, bufferTensors = 0;
  /// Each buffer's name and why it is not trained, in module order.
  std::vector<std::pair<std::string, std::string>> buffers;
  int64_t parameterBytes = 0;
  int64_t tokensPerStep = 0; // batch * seq of the bound shapes
  int64_t forwardFlops = 0;
  int64_t numOps = 0;
  std::map<std::string, int64_t> opCounts;
  /// Keyed by block index (BlockAttr::kEmbed, layers, BlockAttr::kHead).
  std::map<int64_t, BlockTotals> blocks;
};

/// Totals over the module's functions; uses `frenzy.block` when present.
ModelSummary summarize(mlir::ModuleOp module);

/// Prints the summary for people (`frenzy-opt --emit=summary`).
void printSummary(const ModelSummary &s, llvm::raw_ostream &os);

/// Formats 124439808 as "124,439,808".
std::string withThousands(int64_t v);

} // namespace frenzy

#endif
