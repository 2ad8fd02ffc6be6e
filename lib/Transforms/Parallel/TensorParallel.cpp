//===- TensorParallel.cpp - the frenzy-tensor-parallel pass ---------------===//
//
// Rewrites the forward graph of every transformer block into what one rank
// of a TP group of `degree` ranks computes (Megatron-LM's layout), before
// autodiff, so the backward and its communication follow by the gradient
// rules of tp_copy and tp_all_reduce:
//
//  - a matmul (or Gemm) of a replicated activation by a block weight is
//    column-parallel: the weight's output dim is split, a tp_copy (f) goes
//    on its input; one of an activation split on its last dim is
//    row-parallel: the weight's input dim is split, a tp_all_reduce (g)
//    follows it (then a Gemm's bias) and the result is replicated again;
//  - a split spreads through bias adds (the bias is split too),
//    elementwise ops, dropout (tp_split tells the runtime the geometry),
//    transposes, reshapes that keep each rank's share in one dim (hidden ->
//    heads x head dim; batch merged with heads gives batch blocks),
//    attention over heads (3-d over merged heads is made 4-d), and a cut of a
//    column-parallel output into k equal parts along the split dim, by one
//    Split or by k Slices (a fused QKV or gate/up weight: each part is
//    split on its own, so the weight is split in k blocks and each Slice
//    takes its part's local share);
//  - anything else reading a split value is an error naming the op.
//
// Split values get their local types (the split dim divided by the degree);
// split parameters get `frenzy.shard = [dim, parts, blocks]`: rank r holds,
// of the dim viewed as [blocks, parts, n], the slice [:, r, :].
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/Dialect/Frenzy/Transforms/TensorParallel.h"

#include "SequenceParallel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYTENSORPARALLEL
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {

struct Split {
  int64_t dim = 0;
  int64_t blocks = 1;
};

class Rewriter {
public:
  Rewriter(int64_t degree) : T(degree) {}
  LogicalResult run(func::FuncOp func);

private:
  LogicalResult visit(Operation *op);
  LogicalResult matmul(MatMulOp op);
  LogicalResult gemm(GemmOp op);
  LogicalResult reshape(ReshapeOp op, Split in);
  LogicalResult attention(AttentionOp op);
  LogicalResult elementwise(Operation *op);
  LogicalResult retype(func::FuncOp func);
  InFlightDiagnostic fail(Operation *op, const Twine &what) {
    return op->emitError("tensor parallelism (degree ") << T << "): " << what;
  }
  std::optional<Split> splitOf(Value v) const {
    auto it = split.find(v);
    return it == split.end() ? std::nullopt : std::optional<Split>(it->second);
  }

  int64_t T;
  DenseMap<Value, Split> split;         // activations, by split dim
  DenseMap<Operation *, Split> shards;  // parameters
};

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

/// The block weight behind a matmul operand: a trainable 2-d parameter,
/// directly or through one transpose; `transposed` says which.
ParamOp blockWeight(Value v, bool &transposed) {
  transposed = false;
  if (auto t = v.getDefiningOp<TransposeOp>()) {
    v = t.getInput();
    transposed = true;
  }
  auto p = v.getDefiningOp<ParamOp>();
  return p && rankOf(p.getResult()) == 2 && p.getTrainable() ? p : ParamOp();
}

/// The part of a fused projection's output that `sl` takes along `dim`
/// (size `full`, `parts` equal parts): its index, or -1 when the slice is
/// not exactly one whole part (stride 1).
int64_t slicedPart(SliceOp sl, int64_t dim, int64_t full, int64_t parts) {
  int64_t w = full / parts;
  int64_t start = sl.getStarts()[dim], limit = sl.getLimits()[dim];
  if (sl.getStrides()[dim] != 1 || limit - start != w || start % w)
    return -1;
  return start / w;
}

/// k when `v` (through one bias add) is cut into k equal parts along its
/// last dim: the fused projection (QKV; gate and up). Torch exports the cut
/// as one Split (`x.split(C, dim=-1)`) or as k Slices (`chunk`, or
/// `x[..., a:b]`); the k Slices must take k equal whole parts between them.
int64_t fusedParts(Value v) {
  int64_t last = rankOf(v) - 1;
  int64_t full = cast<RankedTensorType>(v.getType()).getDimSize(last);
  for (int hop = 0; hop < 2; ++hop) {
    Value next;
    SmallVector<SliceOp> slices;
    int64_t users = 0;
    for (Operation *user : v.getUsers()) {
      ++users;
      if (auto s = dyn_cast<SplitOp>(user))
        if (s.getAxis() == last)
          return int64_t(s.getNumResults());
      if (auto sl = dyn_cast<SliceOp>(user))
        slices.push_back(sl);
      if (isa<AddOp>(user) && v.hasOneUse())
        next = user->getResult(0);
    }
    if (!slices.empty() && int64_t(slices.size()) == users) {
      // The parts' width is the first slice's; every slice must take one.
      int64_t w = slices.front().getLimits()[last] -
                  slices.front().getStarts()[last];
      if (w <= 0 || w == full || full % w)
        return 1;
      for (SliceOp sl : slices)
        if (slicedPart(sl, last, full, full / w) < 0)
          return 1;
      return full / w;
    }
    if (!next)
      return 1;
    v = next;
  }
  return 1;
}

LogicalResult Rewriter::matmul(MatMulOp op) {
  bool transposed = false;
  ParamOp w = blockWeight(op.getRhs(), transposed);
  std::optional<Split> in = splitOf(op.getLhs());
  if (!w) {
    if (in || splitOf(op.getRhs()))
      return fail(op, "a matmul of a split value by something other than a "
                      "block weight");
    return success();
  }
  OpBuilder b(op);
  int64_t r = rankOf(op.getResult());
  if (!in) { // column-parallel
    int64_t blocks = fusedParts(op.getResult());
    shards[w] = {transposed ? 0 : 1, blocks};
    auto f = b.create<TPCopyOp>(op.getLoc(), op.getLhs());
    f->setAttrs(op->getDiscardableAttrDictionary());
    op.getLhsMutable().assign(f);
    split[op.getResult()] = {r - 1, blocks};
    return success();
  }
  if (in->dim != rankOf(op.getLhs()) - 1 || in->blocks != 1)
    return fail(op, "a matmul whose input is split on a dim other than the "
                    "one it contracts");
  shards[w] = {transposed ? 1 : 0, 1}; // row-parallel
  b.setInsertionPointAfter(op);
  auto g = b.create<TPAllReduceOp>(op.getLoc(), op.getResult());
  g->setAttrs(op->getDiscardableAttrDictionary());
  op.getResult().replaceAllUsesExcept(g, g);
  return success();
}

/// ONNX Gemm (torch's Linear on 2-d input: nn.MultiheadAttention's
/// out_proj): alpha * a * op(b) + beta * c with b a block weight. Row-
/// parallel, c must be added once, after the sum: the gemm loses c and an
/// add follows the tp_all_reduce.
LogicalResult Rewriter::gemm(GemmOp op) {
  bool transposed = false;
  ParamOp w = blockWeight(op.getB(), transposed);
  std::optional<Split> in = splitOf(op.getA());
  if (!w || transposed || op.getTransA()) {
    if (in || splitOf(op.getB()))
      return fail(op, "a gemm of a split value by something other than a "
                      "block weight");
    return success();
  }
  bool transB = op.getTransB();
  Value c = op.getC();
  OpBuilder b(op);
  if (!in) { // column-parallel; a bias c is split like the output
    int64_t blocks = fusedParts(op.getResult());
    shards[w] = {transB ? 0 : 1, blocks};
    if (c) {
      auto p = c.getDefiningOp<ParamOp>();
      if (!p || rankOf(c) != 1)
        return fail(op, "a column-parallel gemm whose c is not a bias "
                        "parameter");
      shards[p] = {0, blocks};
    }
    auto f = b.create<TPCopyOp>(op.getLoc(), op.getA());
    f->setAttrs(op->getDiscardableAttrDictionary());
    op.getAMutable().assign(f);
    split[op.getResult()] = {1, blocks};
    return success();
  }
  if (in->dim != 1 || in->blocks != 1)
    return fail(op, "a gemm whose input is split on a dim other than the "
                    "one it contracts");
  shards[w] = {transB ? 1 : 0, 1};
  if (c && !op.getBeta().isExactlyValue(1.0))
    return fail(op, "a row-parallel gemm with beta != 1");
  auto local = b.create<GemmOp>(op.getLoc(), TypeRange{op.getType()},
                                ValueRange{op.getA(), op.getB()},
                                op->getAttrs());
  auto g = b.create<TPAllReduceOp>(op.getLoc(), local.getResult());
  g->setAttrs(op->getDiscardableAttrDictionary());
  Value result = g;
  if (c) {
    auto add = b.create<AddOp>(op.getLoc(), op.getType(), g, c);
    add->setAttrs(op->getDiscardableAttrDictionary());
    result = add;
  }
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

/// A reshape keeps the split when one output dim holds the whole run of
/// the degree's factor: the input, flat, is [P, blocks, T, n, S] (rank r
/// holds [:, :, r, :, :]); an output dim j with the dims after it S' and
/// n*S a multiple of S', and O[j]*S' a multiple of T*n*S, is then viewed
/// as [blocks', T, n*S/S']. hidden -> [heads, head dim] and back keep
/// blocks = 1; torch's [seq, batch, hidden] -> [seq, batch*heads, head dim]
/// (nn.MultiheadAttention) gives blocks' = batch.
LogicalResult Rewriter::reshape(ReshapeOp op, Split in) {
  auto inT = cast<RankedTensorType>(op.getInput().getType());
  auto outT = cast<RankedTensorType>(op.getType());
  int64_t size = inT.getDimSize(in.dim);
  if (size % (in.blocks * T))
    return fail(op, "dim " + Twine(in.dim) + " of size " + Twine(size) +
                        " does not split " + Twine(T) + " ways in " +
                        Twine(in.blocks) + " blocks");
  int64_t inner = 1; // n * S
  for (int64_t i = in.dim + 1; i < inT.getRank(); ++i)
    inner *= inT.getDimSize(i);
  inner *= size / (in.blocks * T);
  int64_t after = 1; // S'
  for (int64_t j = outT.getRank() - 1; j >= 0; --j) {
    int64_t span = outT.getDimSize(j) * after;
    if (inner % after == 0 && span % (T * inner) == 0) {
      split[op.getResult()] = {j, span / (T * inner)};
      return success();
    }
    after = span;
  }
  auto shape = [](RankedTensorType t) {
    std::string s;
    for (int64_t d : t.getShape())
      s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
  };
  return fail(op, "a reshape from " + shape(inT) + " to " + shape(outT) +
                      " that does not keep dim " + Twine(in.dim) + "'s " +
                      Twine(T) + " shares whole (are the heads divisible by " +
                      Twine(T) + "?)");
}

/// Attention over split heads. torch's nn.MultiheadAttention runs it on
/// [batch*heads, T, D] (heads merged into dim 0, split in batch blocks; at
/// batch 1 one block): it is wrapped in reshapes to [batch, heads, T, D],
/// whose dropout decisions the runtime draws per (sample, global head), as
/// it does for the rows of the unsplit [batch*heads, T, D].
LogicalResult Rewriter::attention(AttentionOp at) {
  int64_t r = rankOf(at.getQ());
  int64_t heads = r - 3;
  std::optional<Split> q = splitOf(at.getQ());
  for (Value v : {at.getQ(), at.getK(), at.getV()})
    if (!splitOf(v) || splitOf(v)->dim != heads ||
        splitOf(v)->blocks != q->blocks)
      return fail(at, "attention whose q, k and v are not split by heads");
  if (r >= 4 && q->blocks == 1) {
    split[at.getResult()] = {heads, 1};
    at.setTpParts(T);
    return success();
  }
  if (r != 3 || (at.getMask() && rankOf(at.getMask()) > 2))
    return fail(at, "attention whose heads are merged with another dim");
  int64_t batch = q->blocks;
  OpBuilder b(at);
  auto unmerge = [&](Value v) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    auto four = RankedTensorType::get(
        {batch, t.getDimSize(0) / batch, t.getDimSize(1), t.getDimSize(2)},
        t.getElementType());
    auto rs = b.create<ReshapeOp>(at.getLoc(), four, v);
    rs->setAttrs(at->getDiscardableAttrDictionary());
    split[rs.getResult()] = {1, 1};
    return rs;
  };
  Value q4 = unmerge(at.getQ()), k4 = unmerge(at.getK()),
        v4 = unmerge(at.getV());
  auto outT = cast<RankedTensorType>(at.getType());
  auto out4 = RankedTensorType::get({batch, outT.getDimSize(0) / batch,
                                     outT.getDimSize(1), outT.getDimSize(2)},
                                    outT.getElementType());
  SmallVector<Value> operands = {q4, k4, v4};
  if (at.getMask())
    operands.push_back(at.getMask());
  auto at4 = b.create<AttentionOp>(at.getLoc(), TypeRange{out4}, operands,
                                   at->getAttrs());
  at4.setTpParts(T);
  split[at4.getResult()] = {1, 1};
  auto back = b.create<ReshapeOp>(at.getLoc(), outT, at4.getResult());
  back->setAttrs(at->getDiscardableAttrDictionary());
  split[back.getResult()] = {0, batch};
  at.getResult().replaceAllUsesWith(back.getResult());
  at.erase();
  return success();
}

/// Binary elementwise ops (broadcasting): add, sub, mul, div, swiglu.
LogicalResult Rewriter::elementwise(Operation *op) {
  int64_t r = rankOf(op->getResult(0));
  // Dims of operand v align with the result's from the right.
  auto toResult = [&](Value v, int64_t d) { return d + r - rankOf(v); };
  std::optional<Split> out;
  for (Value v : op->getOperands())
    if (std::optional<Split> vs = splitOf(v)) {
      Split s{toResult(v, vs->dim), vs->blocks};
      if (out && (out->dim != s.dim || out->blocks != s.blocks))
        return fail(op, "an add of values split differently");
      out = s;
    }
  if (!out)
    return success();
  for (Value v : op->getOperands()) {
    if (splitOf(v))
      continue;
    // A replicated operand must broadcast along the split dim, or be a 1-d
    // parameter along it (a column-parallel bias), which is split too.
    int64_t d = out->dim - (r - rankOf(v));
    auto type = cast<RankedTensorType>(v.getType());
    if (d < 0 || type.getDimSize(d) == 1)
      continue;
    auto p = v.getDefiningOp<ParamOp>();
    if (!isa<AddOp>(op) || !p || type.getRank() != 1)
      return fail(op, "a split value combined with a replicated tensor "
                      "along the split dim that is not a bias parameter");
    shards[p] = {0, out->blocks};
  }
  split[op->getResult(0)] = *out;
  return success();
}

LogicalResult Rewriter::visit(Operation *op) {
  if (auto m = dyn_cast<MatMulOp>(op))
    return matmul(m);
  if (auto g = dyn_cast<GemmOp>(op))
    return gemm(g);
  if (isa<AddOp, SubOp, MulOp, DivOp, SwiGLUOp>(op))
    return elementwise(op);
  bool anySplit = llvm::any_of(op->getOperands(),
                               [&](Value v) { return split.count(v); });
  if (!anySplit)
    return success();
  Split in = *splitOf(op->getOperand(0));
  if (auto t = dyn_cast<TransposeOp>(op)) {
    for (auto [i, p] : llvm::enumerate(t.getPerm()))
      if (p == in.dim)
        split[t.getResult()] = {int64_t(i), in.blocks};
    return success();
  }
  if (auto s = dyn_cast<SplitOp>(op)) {
    if (s.getAxis() != in.dim || in.blocks != int64_t(s.getNumResults()))
      return fail(op, "a split that does not separate the fused projection's "
                      "parts");
    for (Value r : s.getResults())
      split[r] = {in.dim, 1};
    return success();
  }
  if (auto rs = dyn_cast<ReshapeOp>(op))
    return reshape(rs, in);
  if (auto sl = dyn_cast<SliceOp>(op)) {
    auto inT = cast<RankedTensorType>(sl.getInput().getType());
    int64_t full = inT.getDimSize(in.dim);
    SmallVector<int64_t> starts(sl.getStarts()), limits(sl.getLimits());
    if (in.blocks > 1) {
      // One part of a fused projection's output: each rank holds its share
      // of every part, side by side, so the part's local bounds are the
      // global ones divided by the degree.
      int64_t part = slicedPart(sl, in.dim, full, in.blocks);
      if (part < 0)
        return fail(op, "a slice that does not take one of the " +
                            Twine(in.blocks) +
                            " equal parts of the fused projection");
      int64_t w = full / in.blocks;
      if (w % T)
        return fail(op, "a fused projection's part of size " + Twine(w) +
                            " does not split " + Twine(T) + " ways");
      starts[in.dim] = part * w / T;
      limits[in.dim] = (part + 1) * w / T;
      sl.setStarts(starts);
      sl.setLimits(limits);
      split[sl.getResult()] = {in.dim, 1};
      return success();
    }
    // Slicing another dim (RoPE's halves of the head dim) keeps the split;
    // the split dim's limit becomes the local size.
    if (starts[in.dim] != 0 || limits[in.dim] != full ||
        sl.getStrides()[in.dim] != 1)
      return fail(op, "a slice [" + Twine(starts[in.dim]) + ", " +
                          Twine(limits[in.dim]) + ") of the split dim (size " +
                          Twine(full) +
                          "); Frenzy splits a projection's output sliced "
                          "along it only into equal whole parts (a fused "
                          "QKV or gate/up projection)");
    limits[in.dim] = full / T;
    sl.setLimits(limits);
    split[sl.getResult()] = in;
    return success();
  }
  if (auto c = dyn_cast<ConcatOp>(op)) {
    for (Value v : c.getInputs())
      if (!splitOf(v) || splitOf(v)->dim != in.dim)
        return fail(op, "a concat of values not split alike");
    if (c.getAxis() == in.dim)
      return fail(op, "a concat along the split dim");
    split[c.getResult()] = in;
    return success();
  }
  if (auto at = dyn_cast<AttentionOp>(op))
    return attention(at);
  if (auto d = dyn_cast<DropoutOp>(op)) {
    // The runtime draws element i's decision from its index in the unsplit
    // tensor; the geometry maps a local index to it.
    d.setTpSplit({in.dim, T, in.blocks});
    split[d.getResult()] = in;
    return success();
  }
  if (op->getNumOperands() == 1 && op->getNumResults() == 1 &&
      op->hasTrait<OpTrait::SameOperandsAndResultType>()) {
    split[op->getResult(0)] = in;
    return success();
  }
  return fail(op, "'" + op->getName().getStringRef() +
                      "' reads a split value; Frenzy cannot split it yet");
}

RankedTensorType localType(Type t, int64_t dim, int64_t parts) {
  auto r = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(r.getShape());
  shape[dim] /= parts;
  return RankedTensorType::get(shape, r.getElementType());
}

LogicalResult Rewriter::retype(func::FuncOp func) {
  // In program order, not the maps' pointer order: when several tensors do
  // not split, the same one is reported on every run.
  auto retypeParam = [&](Operation *op, const Split &s) -> LogicalResult {
    auto p = cast<ParamOp>(op);
    auto t = cast<RankedTensorType>(p.getType());
    if (t.getDimSize(s.dim) % (T * s.blocks))
      return fail(op, "parameter dim " + Twine(s.dim) + " of size " +
                          Twine(t.getDimSize(s.dim)) + " does not split " +
                          Twine(T) + " ways in " + Twine(s.blocks) + " blocks");
    p.getResult().setType(localType(t, s.dim, T));
    p->setAttr("frenzy.shard",
               DenseI64ArrayAttr::get(op->getContext(), {s.dim, T, s.blocks}));
    for (Operation *user : p->getUsers())
      if (auto tr = dyn_cast<TransposeOp>(user))
        tr.getResult().setType(localType(
            tr.getType(), s.dim == 0 ? 1 : 0, T));
    return success();
  };
  auto retypeValue = [&](Value v) -> LogicalResult {
    auto it = split.find(v);
    if (it == split.end())
      return success();
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getDimSize(it->second.dim) % T)
      return fail(v.getDefiningOp(), "dim " + Twine(it->second.dim) +
                                         " of size " +
                                         Twine(t.getDimSize(it->second.dim)) +
                                         " does not split " + Twine(T) +
                                         " ways");
    v.setType(localType(t, it->second.dim, T));
    return success();
  };
  for (BlockArgument a : func.getArguments())
    if (failed(retypeValue(a)))
      return failure();
  // Params first (their Transpose users are retyped with them), then the
  // split activations, each in program order.
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops)
    if (auto it = shards.find(op); it != shards.end())
      if (failed(retypeParam(op, it->second)))
        return failure();
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (failed(retypeValue(r)))
        return failure();
  return success();
}

LogicalResult Rewriter::run(func::FuncOp func) {
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    int64_t block = blockIndexOf(&op);
    if (block < 0 || block == BlockAttr::kHead || isa<TPCopyOp>(op))
      continue;
    if (failed(visit(&op)))
      return failure();
  }
  return retype(func);
}

/// Splits every function of `module` for TP `degree`, then shards their
/// token-wise regions by tokens with `sequenceParallel`.
LogicalResult splitModule(ModuleOp module, int64_t degree,
                          bool sequenceParallel) {
  for (auto func : module.getOps<func::FuncOp>())
    if (failed(Rewriter(degree).run(func)) ||
        (sequenceParallel && failed(shardSequence(func, degree))))
      return failure();
  OpBuilder b(module);
  module->setAttr("frenzy.tp_degree", b.getI64IntegerAttr(degree));
  if (sequenceParallel)
    module->setAttr(kSequenceParallelAttrName, b.getUnitAttr());
  return success();
}

struct FrenzyTensorParallelPass
    : frenzy::impl::FrenzyTensorParallelBase<FrenzyTensorParallelPass> {
  using FrenzyTensorParallelBase::FrenzyTensorParallelBase;
  void runOnOperation() override {
    if (degree <= 1)
      return;
    if (failed(splitModule(getOperation(), degree, sequenceParallel)))
      signalPassFailure();
  }
};

} // namespace

std::string frenzy::tensorParallelRefusal(ModuleOp module, int64_t degree,
                                          bool sequenceParallel) {
  if (degree <= 1)
    return "";
  std::string why;
  ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && why.empty()) {
      llvm::raw_string_ostream os(why);
      // The importer's locations name the ONNX node; print them plainly.
      if (auto name = dyn_cast<NameLoc>(d.getLocation()))
        os << "node '" << name.getName().getValue() << "': ";
      else if (auto file = dyn_cast<FileLineColLoc>(d.getLocation()))
        os << file.getFilename().getValue() << ":" << file.getLine() << ":"
           << file.getColumn() << ": ";
      // The degree is the caller's to say; keep the reason only.
      std::string msg = d.str();
      llvm::StringRef rest = msg;
      if (rest.consume_front("tensor parallelism (degree ") ||
          rest.consume_front("sequence parallelism (degree "))
        rest = rest.split("): ").second;
      os << rest;
    }
    return success();
  });
  OwningOpRef<ModuleOp> copy = module.clone();
  if (succeeded(splitModule(*copy, degree, sequenceParallel)))
    return "";
  return why.empty() ? "the split failed" : why;
}
