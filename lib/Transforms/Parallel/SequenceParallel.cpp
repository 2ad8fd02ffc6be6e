//===- SequenceParallel.cpp - Megatron sequence parallelism ---------------===//
//
// After frenzy-tensor-parallel has split a TP rank's blocks, the regions
// between the column- and row-parallel matmuls (norms, dropout, residual
// adds, bias adds) still compute the whole replicated activation on every
// rank. With sequence parallelism each rank computes them on its chunk of
// the tokens instead (Korthikanti et al., Megatron-LM):
//
//  - tp_all_reduce after a row-parallel matmul becomes sp_reduce_scatter;
//  - tp_copy before a column-parallel matmul, on a sharded value, becomes
//    sp_all_gather;
//  - token-wise ops (a norm over the last dim, dropout, elementwise ops
//    whose other operands are the same shape or broadcast over the tokens)
//    with a sharded operand run on the chunk; so do a norm or an add of a
//    layer's input (the residual stream), which is scattered (sp_scatter)
//    where it comes replicated from outside the layers (the embedding);
//  - anything else reading a sharded value gets it back whole (sp_gather),
//    once per value and block; a layer's sharded output read by the next
//    layer's token-wise ops stays sharded (the pipeline sends rank j's chunk
//    to rank j of the next stage);
//  - a parameter read by a sharded op (a norm's scale, a bias) goes through
//    tp_copy: its gradient on a chunk is a partial sum, which the copy's
//    backward all-reduces over the TP group.
//
// Chunks are of the flattened tokens (all dims but the last), contiguous,
// in rank order: what MPI_Allgather and MPI_Reduce_scatter concatenate,
// for [B, S, H] and [B*S, H] alike. A chunk's type keeps the rank: the
// leading dims are divided greedily (each by the part of the degree left
// that it holds), which only names the chunk's size; every sharded op is
// token-wise, so nothing reads that shape otherwise. Dropout on a chunk gets
// `tp_split = [0, T, 1]`: rank r's elements are the r-th contiguous run of
// the unsplit tensor, the decisions one rank draws there.
//
//===----------------------------------------------------------------------===//
#include "SequenceParallel.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include <numeric>

using namespace mlir;
using namespace frenzy;

namespace {

RankedTensorType tensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

std::string shapeText(RankedTensorType t) {
  std::string s;
  for (int64_t d : t.getShape())
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// A value that can be an activation sharded by tokens: a float tensor of
/// rank >= 2.
bool tokenShaped(Value v) {
  RankedTensorType t = tensorType(v);
  return t && t.getRank() >= 2 && isa<FloatType>(t.getElementType()) &&
         t.hasStaticShape();
}

/// An operand broadcast over every token of a `rank`-d result: its dims but
/// the last (aligned from the right) are all 1 (a bias, a norm's scale, a
/// scalar).
bool broadcastOverTokens(Value v) {
  RankedTensorType t = tensorType(v);
  if (!t)
    return false;
  for (int64_t i = 0; i + 1 < t.getRank(); ++i)
    if (t.getDimSize(i) != 1)
      return false;
  return true;
}

class Sharder {
public:
  explicit Sharder(int64_t degree) : T(degree) {}
  LogicalResult run(func::FuncOp func);

private:
  LogicalResult visit(Operation *op, int64_t block);
  bool tokenWise(Operation *op) const;
  LogicalResult shardTokenWise(Operation *op, int64_t block);
  FailureOr<RankedTensorType> chunkType(Operation *op, RankedTensorType full);
  Value scatter(Value v, Operation *user);
  Value gather(Value v, Operation *user);
  Value paramCopy(Value p, Operation *user);
  InFlightDiagnostic fail(Operation *op, const Twine &what) {
    return op->emitError("sequence parallelism (degree ") << T << "): " << what;
  }
  template <class OpT>
  Value create(Operation *at, Type type, Value input) {
    OpBuilder b(at);
    auto op = b.create<OpT>(at->getLoc(), type, input);
    op->setAttrs(at->getDiscardableAttrDictionary());
    return op.getResult();
  }

  int64_t T;
  DenseMap<Value, RankedTensorType> full; // sharded value -> unsplit type
  // Per block (cleared when the block changes): the chunk of a replicated
  // value, the whole of a sharded one, a parameter's tp_copy.
  DenseMap<Value, Value> scattered, gathered, copied;
};

bool Sharder::tokenWise(Operation *op) const {
  if (op->getNumResults() != 1 || !tokenShaped(op->getResult(0)))
    return false;
  RankedTensorType out = tensorType(op->getResult(0));
  int64_t last = out.getRank() - 1;
  auto lastAxis = [&](int64_t axis) { return axis == last || axis == -1; };
  if (auto n = dyn_cast<LayerNormOp>(op))
    return lastAxis(n.getAxis()) && broadcastOverTokens(n.getScale()) &&
           (!n.getBias() || broadcastOverTokens(n.getBias()));
  if (auto n = dyn_cast<RMSNormOp>(op))
    return lastAxis(n.getAxis()) && broadcastOverTokens(n.getScale());
  if (isa<DropoutOp>(op))
    return true;
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    bool token = false;
    for (Value v : op->getOperands()) {
      if (v.getType() == out || full.lookup(v) == out)
        token = true;
      else if (!broadcastOverTokens(v))
        return false;
    }
    return token;
  }
  if (op->getNumOperands() == 1 &&
      op->hasTrait<OpTrait::SameOperandsAndResultType>() &&
      !isa<TPCopyOp, TPAllReduceOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    return !axis || lastAxis(axis.getInt());
  }
  return false;
}

FailureOr<RankedTensorType> Sharder::chunkType(Operation *op,
                                               RankedTensorType t) {
  SmallVector<int64_t> shape(t.getShape());
  int64_t left = T, tokens = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) {
    tokens *= shape[i];
    int64_t g = std::gcd(shape[i], left);
    shape[i] /= g;
    left /= g;
  }
  if (left != 1) {
    fail(op, "'" + op->getName().getStringRef() + "' on " + shapeText(t) +
                 ": its " + Twine(tokens) + " tokens do not divide by " +
                 Twine(T) +
                 " (choose a micro-batch and sequence whose tokens do, or "
                 "drop --sequence-parallel)");
    return failure();
  }
  return RankedTensorType::get(shape, t.getElementType());
}

Value Sharder::scatter(Value v, Operation *user) {
  if (full.count(v))
    return v;
  Value &s = scattered[v];
  if (!s) {
    FailureOr<RankedTensorType> c = chunkType(user, tensorType(v));
    if (failed(c))
      return nullptr;
    s = create<SPScatterOp>(user, *c, v);
    full[s] = tensorType(v);
  }
  return s;
}

Value Sharder::gather(Value v, Operation *user) {
  Value &g = gathered[v];
  if (!g)
    g = create<SPGatherOp>(user, full.lookup(v), v);
  return g;
}

Value Sharder::paramCopy(Value p, Operation *user) {
  Value &c = copied[p];
  if (!c)
    c = create<TPCopyOp>(user, p.getType(), p);
  return c;
}

LogicalResult Sharder::shardTokenWise(Operation *op, int64_t block) {
  RankedTensorType out = tensorType(op->getResult(0));
  for (OpOperand &use : op->getOpOperands()) {
    Value v = use.get();
    if (full.count(v))
      continue;
    if (v.getType() == out) {
      Value s = scatter(v, op);
      if (!s)
        return failure();
      use.set(s);
    } else if (v.getDefiningOp<ParamOp>()) {
      use.set(paramCopy(v, op));
    }
  }
  FailureOr<RankedTensorType> c = chunkType(op, out);
  if (failed(c))
    return failure();
  op->getResult(0).setType(*c);
  full[op->getResult(0)] = out;
  if (auto d = dyn_cast<DropoutOp>(op))
    d.setTpSplit({0, T, 1});
  return success();
}

LogicalResult Sharder::visit(Operation *op, int64_t block) {
  bool layer = block >= 0 && block != BlockAttr::kHead;
  if (layer && isa<TPAllReduceOp>(op)) {
    Value x = op->getOperand(0);
    FailureOr<RankedTensorType> c = chunkType(op, tensorType(x));
    if (failed(c))
      return failure();
    Value rs = create<SPReduceScatterOp>(op, *c, x);
    full[rs] = tensorType(x);
    op->getResult(0).replaceAllUsesWith(rs);
    op->erase();
    return success();
  }
  if (layer && isa<TPCopyOp>(op) && full.count(op->getOperand(0))) {
    Value x = op->getOperand(0);
    Value ag = create<SPAllGatherOp>(op, full.lookup(x), x);
    op->getResult(0).replaceAllUsesWith(ag);
    op->erase();
    return success();
  }
  if (layer && tokenWise(op)) {
    bool anySharded = false, layerInput = false;
    for (Value v : op->getOperands()) {
      anySharded |= bool(full.count(v));
      // The residual stream coming replicated into a layer (from the
      // embedding): its norm or residual add starts the sharded region
      // (not any token-wise op: a mask or rotary table from the embedding
      // is read whole).
      Operation *def = v.getDefiningOp();
      layerInput |= isa<LayerNormOp, RMSNormOp, AddOp>(op) &&
                    v.getType() == op->getResult(0).getType() &&
                    (!def || (blockIndexOf(def) != block &&
                              !isa<ParamOp>(def)));
    }
    if (anySharded || layerInput)
      return shardTokenWise(op, block);
  }
  for (OpOperand &use : op->getOpOperands())
    if (full.count(use.get()))
      use.set(gather(use.get(), op));
  return success();
}

LogicalResult Sharder::run(func::FuncOp func) {
  int64_t current = BlockAttr::kEmbed - 1;
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    int64_t block = blockIndexOf(&op);
    if (block != current) {
      scattered.clear();
      gathered.clear();
      copied.clear();
      current = block;
    }
    if (failed(visit(&op, block)))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult frenzy::shardSequence(func::FuncOp func, int64_t degree) {
  return Sharder(degree).run(func);
}
