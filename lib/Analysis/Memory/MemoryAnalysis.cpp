//===- MemoryAnalysis.cpp - bytes of a training step ----------------------===//
//
// Walks @train_step in program order, the order the runtime executes it. A
// value is allocated by the op that defines it and freed after its last
// reader; parameters, inputs, constants and results persist. The forward
// values read by backward ops are the saved activations. Recomputation
// changes which of them stay alive across the step (see MemoryAnalysis.h).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Memory/MemoryAnalysis.h"

#include "Sharding.h"
#include "Workspace.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace frenzy;

namespace {

bool isBackward(Operation *op) { return op->hasAttr("frenzy.backward"); }

bool isLayer(int64_t block) {
  return block != BlockAttr::kEmbed && block != BlockAttr::kHead;
}

class Analysis {
public:
  Analysis(func::FuncOp func, const MemoryOptions &o, Precision p)
      : func(func), opts(o), bytesPer(precisionBytes(p)) {}

  LogicalResult run(MemoryReport &report);

private:
  int64_t elements(Value v) const {
    return cast<RankedTensorType>(v.getType()).getNumElements();
  }
  /// Bytes of a value on one rank: the policy's element size for its role,
  /// divided by the TP degree when split (or under sequence parallelism).
  int64_t bytes(Value v) const;
  void classify();
  void simulate(MemoryReport &report);
  void addSaved(MemoryReport &report);

  func::FuncOp func;
  const MemoryOptions &opts;
  PrecisionBytes bytesPer;
  DenseSet<Value> split;
  DenseSet<Value> persistent, paramGrads;
  /// Values computed from parameters and constants alone (a transposed
  /// weight): not activations. GPU kernels read them as views of the weight
  /// (0 bytes); the CPU executor materialises them (executor model).
  DenseSet<Value> weightDerived;
  /// Forward values a backward op reads, with the reading block.
  llvm::MapVector<Value, int64_t> saved;
  /// Extra bytes an op keeps for its backward beyond its results
  /// (attention probabilities without recompute, stored dropout masks),
  /// from the forward op to the backward op that consumes them.
  struct Hidden {
    Operation *from, *to;
    int64_t bytes, block;
  };
  SmallVector<Hidden> hidden;
};

int64_t Analysis::bytes(Value v) const {
  auto t = cast<RankedTensorType>(v.getType());
  Type et = t.getElementType();
  int64_t per = elementBytes(et);
  bool isParam = v.getDefiningOp<ParamOp>() != nullptr;
  if (isa<FloatType>(et))
    per = isParam ? bytesPer.weight
          : paramGrads.count(v) ? bytesPer.gradient
                                : bytesPer.activation;
  if (weightDerived.count(v) && !opts.executorModel)
    return 0;
  int64_t n = t.getNumElements() * per;
  int64_t tp = opts.tp;
  if (tp <= 1 || t.getRank() == 0)
    return n;
  bool divide = split.count(v) > 0;
  if (!divide && opts.sequenceParallel && !isParam && isa<FloatType>(et) &&
      t.getRank() >= 2)
    if (Operation *d = v.getDefiningOp())
      divide = isLayer(blockIndexOf(d));
  return divide ? (n + tp - 1) / tp : n;
}

void Analysis::classify() {
  Block &body = func.getBody().front();
  if (opts.tp > 1)
    split = shardedValues(func);
  for (BlockArgument a : body.getArguments())
    persistent.insert(a);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Value v : ret.getOperands())
    persistent.insert(v);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, "frenzy.grad_of"))
      paramGrads.insert(ret.getOperand(i));
  for (Operation &op : body) {
    if (isa<ParamOp, ConstantOp>(op))
      persistent.insert(op.getResult(0));
    if (isa<AdamWUpdateOp, SGDUpdateOp>(op))
      paramGrads.insert(op.getOperand(1));
  }
  for (Operation &op : body) {
    if (isBackward(&op) || isa<ParamOp, ConstantOp>(op) ||
        op.getNumResults() == 0)
      continue;
    bool fromWeights = llvm::all_of(op.getOperands(), [&](Value v) {
      return v.getDefiningOp<ParamOp>() || v.getDefiningOp<ConstantOp>() ||
             weightDerived.count(v);
    });
    if (fromWeights)
      for (Value r : op.getResults())
        weightDerived.insert(r);
  }
  // Saved activations: forward values read by backward ops.
  for (Operation &op : body) {
    if (!isBackward(&op))
      continue;
    for (Value v : op.getOperands()) {
      Operation *d = v.getDefiningOp();
      if (persistent.count(v) || !d || isBackward(d) || saved.count(v) ||
          weightDerived.count(v))
        continue;
      saved.insert({v, blockIndexOf(&op)});
    }
  }
  // State the graph does not show as values. Backward dropouts by seed and
  // attention backwards by their q operand, found in one pass.
  llvm::DenseMap<int64_t, SmallVector<Operation *>> backwardDropouts;
  llvm::DenseMap<Value, SmallVector<AttentionGradOp>> attentionGrads;
  for (Operation &op : body) {
    if (auto bd = dyn_cast<DropoutOp>(op); bd && isBackward(&op))
      backwardDropouts[bd.getSeed()].push_back(&op);
    if (auto g = dyn_cast<AttentionGradOp>(op))
      attentionGrads[g.getQ()].push_back(g);
  }
  for (Operation &op : body) {
    if (isBackward(&op))
      continue;
    if (auto d = dyn_cast<DropoutOp>(op)) {
      if (!opts.storeDropoutMasks || !d.getTraining() || d.getRatio().isZero())
        continue;
      // One byte per element, split like the value it masks.
      int64_t n = elements(d.getResult());
      if (opts.tp > 1 &&
          (split.count(d.getResult()) ||
           (opts.sequenceParallel && isLayer(blockIndexOf(&op)))))
        n = (n + opts.tp - 1) / opts.tp;
      for (Operation *b : backwardDropouts.lookup(d.getSeed()))
        hidden.push_back({&op, b, n, blockIndexOf(&op)});
    }
    if (auto a = dyn_cast<AttentionOp>(op)) {
      if (opts.recompute != Recompute::None)
        continue;
      for (AttentionGradOp g : attentionGrads.lookup(a.getQ())) {
        if (g.getK() != a.getK())
          continue;
        // Probabilities, and with dropout the dropped probabilities and
        // (when kept) the mask: Korthikanti et al.'s 5as^2b in 16-bit.
        auto q = cast<RankedTensorType>(a.getQ().getType());
        auto k = cast<RankedTensorType>(a.getK().getType());
        int64_t tk = k.getShape()[k.getRank() - 2];
        int64_t scores = q.getNumElements() / q.getShape().back() * tk;
        int64_t per = bytesPer.activation;
        if (!a.getDropout().isZero())
          per += bytesPer.activation + (opts.storeDropoutMasks ? 1 : 0);
        int64_t n = scores * per;
        if (opts.tp > 1 && split.count(a.getResult()))
          n = (n + opts.tp - 1) / opts.tp;
        hidden.push_back({&op, g, n, blockIndexOf(&op)});
      }
    }
  }
}

void Analysis::addSaved(MemoryReport &report) {
  for (auto [v, block] : saved) {
    // Full recomputation keeps only what enters a layer from outside it.
    if (opts.recompute == Recompute::Full && isLayer(block) &&
        blockIndexOf(v.getDefiningOp()) == block)
      continue;
    report.savedByBlock[block] += bytes(v);
    report.saved.push_back({v, v.getDefiningOp(), block, bytes(v)});
  }
  for (const Hidden &h : hidden)
    if (!(opts.recompute == Recompute::Full && isLayer(h.block))) {
      report.savedByBlock[h.block] += h.bytes;
      report.saved.push_back({Value(), h.from, h.block, h.bytes});
    }
}

void Analysis::simulate(MemoryReport &report) {
  Block &body = func.getBody().front();
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, size_t> index;
  for (Operation &op : body) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  bool full = opts.recompute == Recompute::Full;
  // Under full recomputation a layer's own saved values die after their
  // last forward reader and come back for that layer's backward.
  DenseSet<Value> dropped;
  std::map<int64_t, int64_t> recomputed; // block -> bytes brought back
  std::map<int64_t, std::pair<size_t, size_t>> backwardSpan;
  for (size_t i = 0; i < ops.size(); ++i)
    if (isBackward(ops[i])) {
      int64_t b = blockIndexOf(ops[i]);
      auto it = backwardSpan.try_emplace(b, i, i).first;
      it->second.second = i;
    }
  if (full)
    for (auto [v, block] : saved)
      if (isLayer(block) && blockIndexOf(v.getDefiningOp()) == block) {
        dropped.insert(v);
        recomputed[block] += bytes(v);
      }

  // Last reader of each value (forward readers only for dropped values).
  llvm::DenseMap<Value, size_t> last;
  for (size_t i = 0; i < ops.size(); ++i)
    for (Value v : ops[i]->getOperands())
      if (!(dropped.count(v) && isBackward(ops[i])))
        last[v] = i;
  std::vector<SmallVector<int64_t>> releases(ops.size() + 1);
  auto releaseAt = [&](size_t i, int64_t n) { releases[i].push_back(n); };

  // Bytes of saved values (and kernel state) alive: the rest of `live` is
  // the transient working set of the moment.
  DenseSet<Value> savedSet;
  for (auto [v, block] : saved)
    if (!dropped.count(v))
      savedSet.insert(v);
  std::vector<SmallVector<int64_t>> savedReleases(ops.size() + 1);
  int64_t live = 0, peak = 0, savedAlive = 0;
  bool gradsInState = !opts.executorModel;
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation *op = ops[i];
    if (isa<func::ReturnOp>(op))
      break;
    OpMemory om{op};
    for (Value r : op->getResults()) {
      int64_t n = bytes(r);
      om.resultBytes += n;
      bool counted = !persistent.count(r) && !(gradsInState && paramGrads.count(r));
      if (!counted)
        continue;
      live += n;
      auto it = last.find(r);
      size_t end = it == last.end() ? i : it->second;
      releaseAt(end, n);
      if (savedSet.count(r)) {
        savedAlive += n;
        savedReleases[end].push_back(n);
      }
    }
    for (const Hidden &h : hidden)
      if (h.from == op && !(full && isLayer(h.block))) {
        live += h.bytes;
        releaseAt(index[h.to], h.bytes);
        savedAlive += h.bytes;
        savedReleases[index[h.to]].push_back(h.bytes);
      }
    if (full && isBackward(op)) {
      int64_t b = blockIndexOf(op);
      auto span = backwardSpan.find(b);
      if (recomputed.count(b) && span != backwardSpan.end() &&
          span->second.first == i) {
        live += recomputed[b];
        releaseAt(span->second.second, recomputed[b]);
      }
    }
    om.workspace = opts.cpuWorkspace ? cpuWorkspaceBytes(op) : 0;
    peak = std::max(peak, live + om.workspace);
    om.transient = live + om.workspace - savedAlive;
    for (int64_t n : releases[i])
      live -= n;
    for (int64_t n : savedReleases[i])
      savedAlive -= n;
    om.liveAfter = live;
    report.ops.push_back(om);
  }
  report.activationPeak = peak;
}

LogicalResult Analysis::run(MemoryReport &report) {
  classify();
  addSaved(report);
  simulate(report);
  // Model states: trainable parameters (split ones divided by TP), the
  // number of optimizer moments from the update ops.
  Block &body = func.getBody().front();
  int moments = 0;
  int64_t params = 0;
  for (Operation &op : body) {
    if (isa<AdamWUpdateOp>(op))
      moments = 2;
    else if (isa<SGDUpdateOp>(op))
      moments = std::max(moments, 1);
    if (auto p = dyn_cast<ParamOp>(op)) {
      int64_t n = elements(p.getResult());
      if (!p.getTrainable()) {
        report.otherPersistent += bytes(p.getResult());
        continue;
      }
      params += opts.tp > 1 && split.count(p.getResult())
                    ? (n + opts.tp - 1) / opts.tp
                    : n;
    }
  }
  report.state = modelStateBytes(params, report.precision, moments, opts.dp,
                                 opts.zeroStage);
  if (opts.executorModel)
    report.state.gradients = 0; // gradients are activations there
  for (Value v : persistent)
    if (!v.getDefiningOp<ParamOp>())
      report.otherPersistent += bytes(v);
  return success();
}

} // namespace

FailureOr<MemoryReport> frenzy::analyzeMemory(ModuleOp module,
                                              const MemoryOptions &options) {
  auto func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func)
    func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func)
    return module.emitError("memory analysis needs a @train_step or @forward "
                            "function");
  if (options.zeroStage < 0 || options.zeroStage > 3)
    return module.emitError("unknown ZeRO stage ")
           << options.zeroStage << "; valid values: 0, 1, 2, 3";
  if (options.tp < 1 || options.dp < 1)
    return module.emitError("tensor- and data-parallel degrees must be >= 1");
  MemoryReport report;
  report.precision = options.precision.value_or(getPrecision(module));
  if (options.executorModel && report.precision != Precision::FP32)
    return module.emitError("the executor model is fp32 only (the CPU "
                            "runtime runs fp32 plans)");
  Analysis a(func, options, report.precision);
  if (failed(a.run(report)))
    return failure();
  return report;
}
