//===- FuseAttention.cpp - fuse scores -> mask -> softmax -> values --------===//
//
// Matches softmax(scale * q k^T [masked]) v at the final matmul. The scale
// may sit on the scores or on q (torch's MultiheadAttention divides q), the
// mask may be boolean (where(cond, -inf, s)) or additive (s + m), and the
// probabilities may pass through dropout.
//
//===----------------------------------------------------------------------===//
#include "MatchUtils.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace frenzy;
using namespace frenzy::fuse;

namespace {

/// Peels multiplications and divisions by constants off `v`.
Value peelScale(Value v, double &scale) {
  while (true) {
    if (auto mul = v.getDefiningOp<MulOp>()) {
      if (auto c = splatValue(mul.getRhs())) {
        scale *= *c;
        v = mul.getLhs();
        continue;
      }
      if (auto c = splatValue(mul.getLhs())) {
        scale *= *c;
        v = mul.getRhs();
        continue;
      }
    }
    if (auto div = v.getDefiningOp<DivOp>())
      if (auto c = splatValue(div.getRhs()); c && *c != 0) {
        scale /= *c;
        v = div.getLhs();
        continue;
      }
    return v;
  }
}

/// True when the mask is built from a triangle (a causal mask).
bool comesFromTrilu(Value v, int depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8)
    return false;
  if (isa<TriluOp>(def))
    return true;
  return llvm::any_of(def->getOperands(), [&](Value o) {
    return comesFromTrilu(o, depth + 1);
  });
}

struct FuseAttention : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    Value p = op.getLhs(), v = op.getRhs();
    double dropout = 0;
    if (auto d = p.getDefiningOp<DropoutOp>()) {
      if (d.getTraining())
        dropout = d.getRatio().convertToDouble();
      p = d.getInput();
    }
    auto softmax = p.getDefiningOp<SoftmaxOp>();
    auto pType = cast<RankedTensorType>(p.getType());
    if (!softmax || int64_t(softmax.getAxis()) != pType.getRank() - 1 || pType.getRank() < 2)
      return failure();

    Value s = softmax.getInput(), mask;
    bool maskIsKeep = false; // where(cond, s, -inf) keeps where cond is true
    if (auto where = s.getDefiningOp<WhereOp>()) {
      auto lhsFill = splatValue(where.getX()), rhsFill = splatValue(where.getY());
      if (lhsFill && *lhsFill <= -1e4) {
        mask = where.getCond();
        s = where.getY();
      } else if (rhsFill && *rhsFill <= -1e4) {
        mask = where.getCond();
        maskIsKeep = true;
        s = where.getX();
      } else {
        return failure();
      }
    }
    double scale = 1.0;
    Value qk = peelScale(s, scale);
    auto scores = qk.getDefiningOp<MatMulOp>();
    if (!scores && !mask) {
      // additive mask: one side of an add leads to the q k^T matmul
      if (auto add = s.getDefiningOp<AddOp>()) {
        for (auto [a, m] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
          double sc = 1.0;
          if (auto mm = peelScale(a, sc).getDefiningOp<MatMulOp>()) {
            scores = mm;
            scale = sc;
            mask = m;
            break;
          }
        }
      }
    }
    if (!scores)
      return failure();
    Value q = peelScale(scores.getLhs(), scale);
    Value kT = peelScale(scores.getRhs(), scale);
    auto qType = cast<RankedTensorType>(q.getType());
    auto kTType = cast<RankedTensorType>(kT.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    if (qType.getRank() != kTType.getRank() || qType.getRank() != vType.getRank())
      return failure();

    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    // k = swap of kT's last two dims; composed with kT's own transpose, so
    // the common reshape->transpose->transpose chain stays one transpose.
    int64_t rank = kTType.getRank();
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    Value kSource = kT;
    if (auto t = kT.getDefiningOp<TransposeOp>()) {
      SmallVector<int64_t> composed;
      for (int64_t i : perm)
        composed.push_back(t.getPerm()[i]);
      perm = composed;
      kSource = t.getInput();
    }
    SmallVector<int64_t> kShape;
    auto srcShape = cast<RankedTensorType>(kSource.getType()).getShape();
    for (int64_t i : perm)
      kShape.push_back(srcShape[i]);
    bool identity = llvm::all_of(llvm::enumerate(perm), [](auto e) {
      return (int64_t)e.index() == e.value();
    });
    Value k = identity ? kSource
                       : rewriter.create<TransposeOp>(
                             loc, RankedTensorType::get(kShape, kTType.getElementType()),
                             kSource, rewriter.getDenseI64ArrayAttr(perm));
    bool causal = mask && comesFromTrilu(mask);
    if (mask && maskIsKeep)
      mask = rewriter.create<NotOp>(loc, mask.getType(), mask);
    auto attn = rewriter.create<AttentionOp>(
        loc, op.getType(), q, k, v, mask, rewriter.getF64FloatAttr(scale),
        causal ? rewriter.getUnitAttr() : UnitAttr(),
        rewriter.getF64FloatAttr(dropout), rewriter.getI64IntegerAttr(0));
    rewriter.replaceOp(op, attn.getResult());
    return success();
  }
};
} // namespace

namespace frenzy {
void populateAttentionFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttention>(patterns.getContext());
}
} // namespace frenzy
