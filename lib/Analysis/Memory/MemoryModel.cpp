//===- MemoryModel.cpp - fast per-rank peak-memory queries ----------------===//
//
// Three analyses per recompute mode (TP 1; TP 2; TP 2 with sequence
// parallelism) separate each block's bytes into split (divided by t under
// TP), layer-only (divided by t under SP) and whole parts; activation bytes
// grow linearly with the micro-batch. Parameters come from the sharding of
// the TP-2 analysis. A query adds model states (ZeRO), in-flight saved
// activations, the largest transient working set of the stage's blocks and
// fixed overheads.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Memory/MemoryModel.h"

#include "Sharding.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include <set>

using namespace mlir;
using namespace frenzy;

int64_t MemoryModel::Part::at(int64_t tp, bool sp) const {
  return (split + tp - 1) / tp + (sp ? (layerOnly + tp - 1) / tp : layerOnly) +
         whole;
}

MemoryModel::BlockInfo &MemoryModel::blockInfo(int64_t block) {
  return blocks[block];
}

const MemoryModel::BlockInfo *MemoryModel::find(int64_t block) const {
  auto it = blocks.find(block);
  return it == blocks.end() ? nullptr : &it->second;
}

FailureOr<MemoryModel> MemoryModel::build(ModuleOp module,
                                          std::optional<Precision> precision) {
  MemoryModel m;
  m.prec = precision.value_or(getPrecision(module));
  if (auto b = module->getAttrOfType<IntegerAttr>("frenzy.batch"))
    m.batch0 = std::max<int64_t>(1, b.getInt());
  if (auto n = module->getAttrOfType<IntegerAttr>("frenzy.num_blocks"))
    m.layers = n.getInt();
  auto func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func)
    return module.emitError("the memory model needs @train_step (run "
                            "frenzy-autodiff first)");

  const Recompute modes[] = {Recompute::None, Recompute::Selective,
                             Recompute::Full};
  for (Recompute r : modes) {
    std::map<int64_t, int64_t> saved[3], transient[3];
    const int64_t tps[] = {1, 2, 2};
    const bool sps[] = {false, false, true};
    for (int k = 0; k < 3; ++k) {
      MemoryOptions o;
      o.precision = m.prec;
      o.tp = tps[k];
      o.sequenceParallel = sps[k];
      o.recompute = r;
      auto report = analyzeMemory(module, o);
      if (failed(report))
        return failure();
      saved[k] = report->savedByBlock;
      for (const OpMemory &om : report->ops) {
        int64_t &t = transient[k][blockIndexOf(om.op)];
        t = std::max(t, om.transient);
      }
      if (k == 0 && r == Recompute::Selective)
        m.ioBytes = report->otherPersistent;
    }
    int idx = int(r);
    auto fill = [&](std::map<int64_t, int64_t> *src, bool isSaved) {
      std::set<int64_t> keys;
      for (int k = 0; k < 3; ++k)
        for (auto &[b, v] : src[k])
          keys.insert(b);
      for (int64_t b : keys) {
        int64_t a1 = src[0][b], a2 = src[1][b], a2sp = src[2][b];
        BlockInfo &bi = m.blockInfo(b);
        Part &q = isSaved ? bi.saved[idx] : bi.transient[idx];
        q.split = std::max<int64_t>(0, 2 * (a1 - a2));
        q.layerOnly = std::max<int64_t>(0, 2 * (a2 - a2sp));
        q.whole = std::max<int64_t>(0, a1 - q.split - q.layerOnly);
      }
    };
    fill(saved, true);
    fill(transient, false);
  }

  // Parameters by block, split or whole under TP.
  DenseSet<Value> split = shardedValues(func);
  func.walk([&](Operation *op) {
    if (isa<AdamWUpdateOp>(op))
      m.moments = 2;
    else if (isa<SGDUpdateOp>(op))
      m.moments = 1;
    auto p = dyn_cast<ParamOp>(op);
    if (!p)
      return;
    BlockInfo &bi = m.blockInfo(blockIndexOf(op));
    int64_t n = cast<RankedTensorType>(p.getType()).getNumElements();
    if (!p.getTrainable())
      bi.buffers += tensorBytes(p.getType());
    else if (split.count(p.getResult()))
      bi.splitParams += n;
    else
      bi.wholeParams += n;
  });
  return m;
}

const MemoryModel::LayerTable &MemoryModel::table(int r, int64_t tp,
                                                  bool sp) const {
  LayerTable &t = tables[{r, tp, sp}];
  if (!t.saved.empty())
    return t;
  int64_t L = std::max<int64_t>(0, layers);
  t.splitParams.assign(L + 1, 0);
  t.wholeParams.assign(L + 1, 0);
  t.buffers.assign(L + 1, 0);
  t.saved.assign(L + 1, 0);
  std::vector<int64_t> level0(L, 0);
  for (int64_t l = 0; l < L; ++l) {
    const BlockInfo *b = find(l);
    BlockInfo empty;
    if (!b)
      b = &empty;
    t.splitParams[l + 1] = t.splitParams[l] + b->splitParams;
    t.wholeParams[l + 1] = t.wholeParams[l] + b->wholeParams;
    t.buffers[l + 1] = t.buffers[l] + b->buffers;
    t.saved[l + 1] = t.saved[l] + b->saved[r].at(tp, sp);
    level0[l] = b->transient[r].at(tp, sp);
  }
  t.transientMax = RangeMax(std::move(level0));
  return t;
}

StageMemory MemoryModel::query(const StageQuery &q,
                               const MemoryOverheads &o) const {
  StageMemory s;
  int64_t splitParams = 0, wholeParams = 0, buffers = 0;
  int64_t saved = 0, transient = 0;
  int r = int(q.recompute);
  auto add = [&](int64_t block) {
    const BlockInfo *b = find(block);
    if (!b)
      return;
    splitParams += b->splitParams;
    wholeParams += b->wholeParams;
    buffers += b->buffers;
    saved += b->saved[r].at(q.tp, q.sequenceParallel);
    transient = std::max(transient, b->transient[r].at(q.tp, q.sequenceParallel));
  };
  if (q.embed)
    add(BlockAttr::kEmbed);
  int64_t first = std::max<int64_t>(0, q.firstLayer);
  int64_t last = std::min<int64_t>(q.lastLayer, layers - 1);
  if (last >= first) {
    const LayerTable &t = table(r, q.tp, q.sequenceParallel);
    splitParams += t.splitParams[last + 1] - t.splitParams[first];
    wholeParams += t.wholeParams[last + 1] - t.wholeParams[first];
    buffers += t.buffers[last + 1] - t.buffers[first];
    saved += t.saved[last + 1] - t.saved[first];
    transient = std::max(transient, t.transientMax.max(first, last));
  }
  if (q.head)
    add(BlockAttr::kHead);
  int64_t params = (splitParams + q.tp - 1) / q.tp + wholeParams;
  s.state = modelStateBytes(params, prec, int(moments), q.dp, q.zeroStage)
                .total() +
            buffers;
  // Activations scale with the micro-batch (the analysis ran at batch0).
  auto scale = [&](int64_t bytes) {
    return (bytes * q.microBatch + batch0 - 1) / batch0;
  };
  s.activations = q.inFlight * scale(saved);
  s.transient = scale(transient) + (q.head ? scale(ioBytes) : 0);
  int communicators = (q.tp > 1) + (q.dp > 1);
  // The workspace is one allocation held all run: no fragmentation share.
  s.overhead = o.contextBytes + o.workspaceBytes + communicators * o.ncclBytes +
               int64_t(o.fragmentation *
                       double(s.state + s.activations + s.transient));
  return s;
}
