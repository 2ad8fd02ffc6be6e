//===- StagePlacement.cpp - stages, ranks and transfers from the IR -------===//
//
// Which instructions a stage runs, and which tensors cross stages, follow
// from the IR: an op belongs to the stage whose placement in frenzy.layout
// (layers = [first, last], embed, head) covers its frenzy.block, or to
// every stage when it has none (the global ops); its phase is its
// frenzy.backward; an operand whose defining op runs on another stage is a
// transfer from there. The lowered program only numbers the tensors: an
// instruction's i-th input is its op's i-th operand.
//
//===----------------------------------------------------------------------===//
#include "PlanParts.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "plan/PlanPrograms.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <set>

using namespace mlir;
using namespace frenzy;
using namespace frenzy::target;

static bool owns(const Stage &st, Operation *op) {
  auto blk = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName);
  if (!blk)
    return true;
  int64_t b = blk.getIndex();
  if (b == BlockAttr::kEmbed)
    return st.embed;
  if (b == BlockAttr::kHead)
    return st.head;
  return b >= st.firstLayer && b <= st.lastLayer;
}

/// The optimizer's ops: each stage runs them for the parameters it owns,
/// after its last backward (the update phase).
static bool isUpdate(Operation *op) {
  StringRef name = op->getName().stripDialect();
  return name == "clip_grad_norm" || name == "adamw_update" ||
         name == "sgd_update";
}

/// The program a stage of TP degree `tp` runs: the one split for it, else
/// the main program (the runtime refuses a stage whose rank count differs).
static int32_t programFor(const LoweredPrograms &lowered, int64_t tp) {
  for (size_t k = 1; k < lowered.programs.size(); ++k)
    if (plan::tpDegree(lowered.programs[k]) == tp)
      return int32_t(k);
  return 0;
}

namespace {
/// One program's ops by instruction index, and back.
struct OpIndex {
  llvm::ArrayRef<Operation *> ops;
  llvm::DenseMap<Operation *, int32_t> index;
  explicit OpIndex(llvm::ArrayRef<Operation *> ops) : ops(ops) {
    for (size_t i = 0; i < ops.size(); ++i)
      index[ops[i]] = int32_t(i);
  }
  /// The instruction defining operand `j` of instruction `i`; -1 for a
  /// function argument, parameter or constant.
  int32_t producer(int32_t i, unsigned j) const {
    Operation *def = ops[size_t(i)]->getOperand(j).getDefiningOp();
    auto it = def ? index.find(def) : index.end();
    return it == index.end() ? -1 : it->second;
  }
};
} // namespace

/// Instructions by phase, and the tensors received and sent.
static void fillStage(const Stage &st, const OpIndex &ix,
                      const plan::Program &prog, StageWork &sw) {
  std::set<int32_t> mine; // forward and backward instructions
  for (int32_t i = 0; i < int32_t(ix.ops.size()); ++i) {
    Operation *op = ix.ops[size_t(i)];
    if (!owns(st, op))
      continue;
    sw.instrs.push_back(i);
    if (isUpdate(op)) {
      sw.update.push_back(i);
      continue;
    }
    mine.insert(i);
    (op->hasAttr("frenzy.backward") ? sw.backward : sw.forward).push_back(i);
  }
  std::set<int32_t> recv, send;
  for (int32_t i = 0; i < int32_t(ix.ops.size()); ++i) {
    bool ours = mine.count(i);
    if (!ours && isUpdate(ix.ops[size_t(i)]))
      continue;
    for (unsigned j = 0; j < ix.ops[size_t(i)]->getNumOperands(); ++j) {
      int32_t p = ix.producer(i, j);
      if (p < 0 || bool(mine.count(p)) == ours)
        continue;
      (ours ? recv : send).insert(prog.instrs(i).inputs(int(j)));
    }
  }
  sw.recv.assign(recv.begin(), recv.end());
  sw.send.assign(send.begin(), send.end());
}

/// The pipeline's transfers: per reading stage, per phase, per instruction
/// and operand in order, each tensor once; from the stage whose forward or
/// backward makes it (the last such stage, should several run its op).
static std::vector<Transfer> transfers(const PipelineWork &pw,
                                       const OpIndex &ix,
                                       const plan::Program &prog) {
  std::map<int32_t, size_t> maker; // instruction -> stage
  for (size_t s = 0; s < pw.stages.size(); ++s)
    for (const auto *list : {&pw.stages[s].forward, &pw.stages[s].backward})
      for (int32_t i : *list)
        maker[i] = s;
  std::vector<Transfer> out;
  for (size_t s = 0; s < pw.stages.size(); ++s) {
    const StageWork &sw = pw.stages[s];
    std::set<int32_t> seen;
    for (bool backward : {false, true})
      for (int32_t i : backward ? sw.backward : sw.forward)
        for (unsigned j = 0; j < ix.ops[size_t(i)]->getNumOperands(); ++j) {
          auto it = maker.find(ix.producer(i, j));
          int32_t t = prog.instrs(i).inputs(int(j));
          if (it == maker.end() || it->second == s || !seen.insert(t).second)
            continue;
          Operation *def = ix.ops[size_t(it->first)];
          out.push_back(
              {t, it->second, s, def->hasAttr("frenzy.backward"), backward});
        }
  }
  return out;
}

void target::placeStages(const PartitionPlan &pp,
                         const LoweredPrograms &lowered, PlacedPlan &out) {
  std::vector<OpIndex> index;
  for (const auto &ops : lowered.ops)
    index.emplace_back(ops);
  int32_t rank = 0;
  int64_t firstMicroBatch = 0;
  out.pipelines.resize(pp.pipelines.size());
  for (size_t p = 0; p < pp.pipelines.size(); ++p) {
    const Pipeline &pipe = pp.pipelines[p];
    PipelineWork &pw = out.pipelines[p];
    pw.stages.resize(pipe.stages.size());
    for (size_t s = 0; s < pipe.stages.size(); ++s) {
      const Stage &st = pipe.stages[s];
      StageWork &sw = pw.stages[s];
      sw.stage = &st;
      sw.pipeline = int32_t(p);
      sw.index = int32_t(s);
      sw.program = programFor(lowered, st.tp());
      sw.firstMicroBatch = firstMicroBatch;
      for (size_t d = 0; d < st.devices.size(); ++d)
        sw.ranks.push_back(rank++);
      fillStage(st, index[size_t(sw.program)],
                lowered.programs[size_t(sw.program)], sw);
    }
    // A pipeline's stages share one program (one TP degree per pipeline).
    if (!pw.stages.empty()) {
      int32_t k = pw.stages.front().program;
      pw.transfers = transfers(pw, index[size_t(k)], lowered.programs[size_t(k)]);
    }
    firstMicroBatch += pipe.microBatches;
  }
  out.ranks = rank;
  out.totalMicroBatches = firstMicroBatch;
  out.stageOf.assign(size_t(rank), nullptr);
  for (const PipelineWork &pw : out.pipelines)
    for (const StageWork &sw : pw.stages)
      for (int32_t r : sw.ranks)
        out.stageOf[size_t(r)] = &sw;
}
