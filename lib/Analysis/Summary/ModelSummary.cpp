//===- ModelSummary.cpp - parameter, block and FLOP totals of a model -----===//
#include "frenzy/Analysis/Summary/ModelSummary.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "frenzy/Import/OnnxImporter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace frenzy {

std::string withThousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

static int64_t intAttrOr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return dflt;
}

ModelSummary summarize(ModuleOp module) {
  ModelSummary s;
  if (auto src = module->getAttrOfType<StringAttr>("frenzy.source"))
    s.source = src.str();
  s.opset = intAttrOr(module, "frenzy.opset", 0);
  s.numBlocks = intAttrOr(module, "frenzy.num_blocks", 0);
  int64_t batch = intAttrOr(module, "frenzy.batch", 0);
  int64_t seq = intAttrOr(module, "frenzy.seq", 0);
  s.tokensPerStep = batch * std::max<int64_t>(seq, 1);

  module.walk([&](Operation *op) {
    if (isa<func::FuncOp, ModuleOp, func::ReturnOp>(op))
      return;
    int64_t blockIndex = BlockAttr::kEmbed;
    if (auto b = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName))
      blockIndex = b.getIndex();
    BlockTotals &bt = s.blocks[blockIndex];
    if (auto p = dyn_cast<ParamOp>(op)) {
      auto type = cast<RankedTensorType>(p.getType());
      if (p.getTrainable()) {
        s.trainableParams += type.getNumElements();
        s.trainableTensors++;
        s.parameterBytes += tensorBytes(type);
        bt.params += type.getNumElements();
      } else {
        s.bufferElements += type.getNumElements();
        s.bufferTensors++;
        auto why = p->getAttrOfType<StringAttr>(kBufferReasonAttr);
        s.buffers.push_back(
            {p.getName().str(), why ? why.str() : "not marked trainable"});
      }
      return;
    }
    if (isa<ConstantOp>(op))
      return;
    s.numOps++;
    s.opCounts[op->getName().stripDialect().str()]++;
    bt.ops++;
    if (auto cost = dyn_cast<CostOpInterface>(op)) {
      int64_t f = cost.getFlops();
      s.forwardFlops += f;
      bt.flops += f;
    }
  });
  return s;
}

static std::string blockName(int64_t index) {
  if (index == BlockAttr::kEmbed)
    return "embed";
  if (index == BlockAttr::kHead)
    return "head";
  return std::to_string(index);
}

void printSummary(const ModelSummary &s, llvm::raw_ostream &os) {
  os << "model:       " << s.source << " (opset " << s.opset << ")\n";
  os << "blocks:      " << s.numBlocks << "\n";
  os << "parameters:  " << withThousands(s.trainableParams) << " in "
     << s.trainableTensors << " tensors ("
     << llvm::format("%.1f", s.parameterBytes / 1048576.0) << " MiB)\n";
  os << "buffers:     " << withThousands(s.bufferElements) << " in "
     << s.bufferTensors << " tensors (not trained)\n";
  for (const auto &[name, why] : s.buffers)
    os << "  " << name << ": " << why << "\n";
  if (s.tokensPerStep > 0)
    os << "FLOPs/token: " << withThousands(s.forwardFlops / s.tokensPerStep)
       << " forward (" << withThousands(s.forwardFlops) << " per step of "
       << s.tokensPerStep << " tokens)\n";
  else
    os << "FLOPs/step:  " << withThousands(s.forwardFlops) << " forward\n";
  os << "ops:         " << s.numOps << " (";
  bool first = true;
  for (auto &[name, count] : s.opCounts) {
    os << (first ? "" : ", ") << name << " " << count;
    first = false;
  }
  os << ")\n";
  os << llvm::format("%-8s %16s %20s %6s\n", (const char *)"block",
                     (const char *)"parameters", (const char *)"forward FLOPs",
                     (const char *)"ops");
  for (auto &[index, bt] : s.blocks)
    os << llvm::format("%-8s %16s %20s %6lld\n", blockName(index).c_str(),
                       withThousands(bt.params).c_str(),
                       withThousands(bt.flops).c_str(), (long long)bt.ops);
}

} // namespace frenzy
