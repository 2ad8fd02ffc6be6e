//===- AnnotateBlocks.cpp - assign every op to embed, a layer, or head ----===//
//
// Layer indices come first from names (node scopes, then parameter paths);
// when no name carries one, from structure: the longest run of repetitions
// of the sequence of parameter-consuming ops is the stack of layers. Ops
// between anchors take the latest block of their operands, so residual adds
// and softmaxes land in the layer that computes them; parameters and
// constants take the earliest block that uses them.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/BlockNames.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <set>

using namespace mlir;

namespace frenzy {
#define GEN_PASS_DEF_FRENZYANNOTATEBLOCKS
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace frenzy;

namespace {
constexpr int64_t kEmbed = BlockAttr::kEmbed;
constexpr int64_t kHead = BlockAttr::kHead;

StringRef nameOf(Operation *op) {
  if (auto p = dyn_cast<ParamOp>(op))
    return p.getName();
  if (auto n = dyn_cast<NameLoc>(op->getLoc()))
    return n.getName().strref();
  return {};
}

/// "/lm_head" for "/lm_head/MatMul"; empty for top-level or bare names.
StringRef moduleScope(StringRef name) {
  if (!name.starts_with("/"))
    return {};
  size_t slash = name.rfind('/');
  return slash == 0 ? StringRef() : name.take_front(slash);
}

bool isValueOp(Operation *op) { return isa<ParamOp, ConstantOp>(op); }

/// The trainable param behind `v`, looking through one view op.
ParamOp paramBehind(Value v) {
  if (auto p = v.getDefiningOp<ParamOp>())
    return p.getTrainable() ? p : ParamOp();
  Operation *def = v.getDefiningOp();
  if (def && isa<TransposeOp, CastOp, ReshapeOp>(def))
    return paramBehind(def->getOperand(0));
  return {};
}

/// Anchors from names; empty when no name has a layer index.
llvm::DenseMap<Operation *, int64_t> anchorsFromNames(ArrayRef<Operation *> ops) {
  llvm::DenseMap<Operation *, int64_t> anchors;
  for (Operation *op : ops) {
    if (isValueOp(op))
      continue;
    NameScope scope = parseNameScope(nameOf(op));
    if (scope.layer) {
      anchors[op] = *scope.layer;
      continue;
    }
    if (scope.hasModulePath)
      continue;
    for (Value v : op->getOperands())
      if (ParamOp p = paramBehind(v))
        if (auto layer = parseNameScope(p.getName()).layer) {
          anchors[op] = *layer;
          break;
        }
  }
  // Renumber so layers are 0..N-1 whatever the exporter's numbering.
  std::set<int64_t> seen;
  for (auto &kv : anchors)
    seen.insert(kv.second);
  std::map<int64_t, int64_t> dense;
  for (int64_t v : seen)
    dense.emplace(v, dense.size());
  for (auto &kv : anchors)
    kv.second = dense[kv.second];
  return anchors;
}

/// Anchors from repeated structure; sets `numLayers`.
llvm::DenseMap<Operation *, int64_t>
anchorsFromStructure(ArrayRef<Operation *> ops, int64_t &numLayers) {
  SmallVector<Operation *> seq;
  SmallVector<std::string> sig;
  for (Operation *op : ops) {
    if (isValueOp(op))
      continue;
    std::string s;
    for (Value v : op->getOperands())
      if (ParamOp p = paramBehind(v)) {
        llvm::raw_string_ostream os(s);
        os << p.getType() << ';';
      }
    if (s.empty())
      continue;
    seq.push_back(op);
    sig.push_back(op->getName().getStringRef().str() + ":" + s);
  }
  int64_t n = seq.size(), bestStart = 0, bestPeriod = 0, bestReps = 0;
  for (int64_t period = 1; period <= n / 2; ++period)
    for (int64_t start = 0; start + 2 * period <= n; ++start) {
      int64_t reps = 1;
      while (start + (reps + 1) * period <= n &&
             std::equal(sig.begin() + start, sig.begin() + start + period,
                        sig.begin() + start + reps * period))
        ++reps;
      if (reps >= 2 && reps * period > bestReps * bestPeriod) {
        bestStart = start;
        bestPeriod = period;
        bestReps = reps;
      }
    }
  llvm::DenseMap<Operation *, int64_t> anchors;
  numLayers = bestReps;
  for (int64_t i = 0; i < n; ++i) {
    if (i < bestStart || bestReps == 0)
      anchors[seq[i]] = kEmbed;
    else if (i >= bestStart + bestReps * bestPeriod)
      anchors[seq[i]] = kHead;
    else
      anchors[seq[i]] = (i - bestStart) / bestPeriod;
  }
  return anchors;
}

struct FrenzyAnnotateBlocksPass
    : frenzy::impl::FrenzyAnnotateBlocksBase<FrenzyAnnotateBlocksPass> {
  using FrenzyAnnotateBlocksBase::FrenzyAnnotateBlocksBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t maxLayers = 0;
    for (auto func : module.getOps<func::FuncOp>())
      maxLayers = std::max(maxLayers, annotate(func));
    module->setAttr("frenzy.num_blocks",
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     maxLayers));
  }

  int64_t annotate(func::FuncOp func) {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (op != func.getOperation())
        ops.push_back(op);
    });
    llvm::DenseMap<Operation *, int64_t> anchors;
    bool structural = structuralOnly;
    int64_t numLayers = 0;
    if (!structural) {
      anchors = anchorsFromNames(ops);
      std::set<int64_t> layers;
      for (auto &kv : anchors)
        layers.insert(kv.second);
      numLayers = layers.size();
      structural = anchors.empty();
    }
    if (structural)
      anchors = anchorsFromStructure(ops, numLayers);

    llvm::DenseMap<Operation *, int64_t> block;
    SmallVector<Operation *> deferred;
    for (Operation *op : ops) {
      if (isValueOp(op)) {
        deferred.push_back(op);
        continue;
      }
      if (auto it = anchors.find(op); it != anchors.end()) {
        block[op] = it->second;
        continue;
      }
      std::optional<int64_t> dep;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          if (auto it = block.find(def); it != block.end())
            dep = std::max(dep.value_or(kEmbed), it->second);
      if (!structural && parseNameScope(nameOf(op)).hasModulePath) {
        // A named module outside the layer list: before or after them.
        block[op] = dep && *dep != kEmbed ? kHead : kEmbed;
      } else if (dep) {
        block[op] = *dep;
      } else {
        deferred.push_back(op);
      }
    }
    // A named module is one unit: ops in it that depend on no layer (the
    // transpose of an untied head weight) go where the rest of it went.
    if (!structural) {
      llvm::StringMap<int64_t> scopeBlock;
      for (Operation *op : ops)
        if (auto it = block.find(op); it != block.end() && it->second == kHead)
          if (StringRef scope = moduleScope(nameOf(op)); !scope.empty())
            scopeBlock[scope] = kHead;
      for (Operation *op : ops)
        if (auto it = block.find(op); it != block.end() && it->second == kEmbed)
          if (scopeBlock.count(moduleScope(nameOf(op))))
            it->second = kHead;
    }
    // Deferred ops take the earliest block among their users.
    for (Operation *op : llvm::reverse(deferred)) {
      std::optional<int64_t> first;
      for (Operation *user : op->getUsers())
        if (auto it = block.find(user); it != block.end())
          first = std::min(first.value_or(kHead), it->second);
      block[op] = first.value_or(kEmbed);
    }
    MLIRContext *ctx = func.getContext();
    for (Operation *op : ops)
      op->setAttr(FrenzyDialect::kBlockAttrName, BlockAttr::get(ctx, block[op]));
    return numLayers;
  }
};
} // namespace
