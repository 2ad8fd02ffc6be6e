//===- FusePatterns.cpp - fuse decomposed GELU, norms and SiLU/SwiGLU ------===//
//
// Exporters write these as chains of elementwise ops, in orders that vary
// with the exporter and the model code (0.5*x*(1+t) vs x*0.5*(1+t), x^3 as
// Pow or as x*x*x). Products are therefore matched as multisets of factors
// rather than as fixed trees.
//
//===----------------------------------------------------------------------===//
#include "MatchUtils.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace frenzy {
#define GEN_PASS_DEF_FRENZYFUSEPATTERNS
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"

void populateAttentionFusionPatterns(RewritePatternSet &patterns);
} // namespace frenzy

using namespace frenzy;
using namespace frenzy::fuse;

namespace {

/// A product that feeds a larger product is matched at the larger one.
bool isInnerFactor(MulOp op) {
  return op->hasOneUse() && isa<MulOp>(*op->user_begin());
}

/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))  -> gelu tanh
/// 0.5 * x * (1 + erf(x / sqrt(2)))                       -> gelu none
struct FuseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool isTanhArgument(Value u, Value x) {
    SmallVector<Value> f;
    double scale;
    flattenProduct(u, f, scale);
    if (f.size() != 1 || std::fabs(scale - std::sqrt(2.0 / M_PI)) > 1e-4)
      return false;
    auto add = f[0].getDefiningOp<AddOp>();
    if (!add)
      return false;
    Value cubic = add.getLhs() == x ? add.getRhs() : add.getLhs();
    if (add.getLhs() != x && add.getRhs() != x)
      return false;
    SmallVector<Value> g;
    double c;
    flattenProduct(cubic, g, c);
    if (std::fabs(c - 0.044715) > 1e-6)
      return false;
    if (g.size() == 3)
      return llvm::all_of(g, [&](Value v) { return v == x; });
    return g.size() == 1 && isCubeOf(g[0], x);
  }

  static bool isErfArgument(Value u, Value x) {
    if (auto div = u.getDefiningOp<DivOp>())
      return div.getLhs() == x && isConstant(div.getRhs(), std::sqrt(2.0));
    SmallVector<Value> f;
    double scale;
    flattenProduct(u, f, scale);
    return f.size() == 1 && f[0] == x &&
           std::fabs(scale - 1.0 / std::sqrt(2.0)) < 1e-4;
  }

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    if (isInnerFactor(root))
      return failure();
    SmallVector<Value> f;
    double scale;
    flattenProduct(root.getResult(), f, scale);
    if (f.size() != 2 || std::fabs(scale - 0.5) > 1e-6)
      return failure();
    for (int i = 0; i < 2; ++i) {
      Value x = f[i];
      double one;
      Value t = addConstant(f[1 - i], one);
      if (!t || one != 1.0)
        continue;
      StringRef approx;
      if (auto tanh = t.getDefiningOp<TanhOp>()) {
        if (isTanhArgument(tanh.getInput(), x))
          approx = "tanh";
      } else if (auto erf = t.getDefiningOp<ErfOp>()) {
        if (isErfArgument(erf.getInput(), x))
          approx = "none";
      }
      if (approx.empty() || x.getType() != root.getType())
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(root, root.getType(), x,
                                          rewriter.getStringAttr(approx));
      return success();
    }
    return failure();
  }
};

/// x * sigmoid(x) -> silu(x); silu(g) * u -> swiglu(g, u).
struct FuseSiluAndSwiGLU : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [a, b] : {std::pair(op.getLhs(), op.getRhs()),
                        std::pair(op.getRhs(), op.getLhs())}) {
      if (auto sig = b.getDefiningOp<SigmoidOp>();
          sig && sig.getInput() == a && a.getType() == op.getType()) {
        rewriter.replaceOpWithNewOp<SiluOp>(op, op.getType(), a);
        return success();
      }
      if (auto silu = a.getDefiningOp<SiluOp>();
          silu && silu->hasOneUse() && b.getType() == op.getType() &&
          silu.getType() == op.getType()) {
        rewriter.replaceOpWithNewOp<SwiGLUOp>(op, op.getType(),
                                              silu.getInput(), b);
        return success();
      }
    }
    return failure();
  }
};

/// `d` when `v` is 1/d: reciprocal(d) or div(1, d) (torch writes rsqrt as
/// either, depending on version).
Value reciprocalOf(Value v) {
  if (auto rec = v.getDefiningOp<ReciprocalOp>())
    return rec.getInput();
  if (auto div = v.getDefiningOp<DivOp>())
    if (isConstant(div.getLhs(), 1.0))
      return div.getRhs();
  return {};
}

/// True when `x` is y - mean(y): the normalised value is then a LayerNorm,
/// not an RMSNorm of x.
bool isCentred(Value x) {
  auto sub = x.getDefiningOp<SubOp>();
  int64_t axis;
  return sub && trailingMean(sub.getRhs(), axis) == sub.getLhs();
}

/// sqrt(mean(x^2 over trailing dims) + eps): sets x, axis and eps.
bool isRootMeanSquare(Value s, Value &x, int64_t &axis, double &eps) {
  auto sqrt = s.getDefiningOp<SqrtOp>();
  if (!sqrt)
    return false;
  Value mean = addConstant(sqrt.getInput(), eps);
  if (!mean || eps <= 0)
    return false;
  Value sq = trailingMean(mean, axis);
  return sq && isSquareOf(sq, x);
}

/// A ones vector for the scale of a norm written without one.
Value onesLike(PatternRewriter &rewriter, Location loc, Value x, int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  auto shape = type.getShape().drop_front(axis);
  auto ty = RankedTensorType::get(shape, type.getElementType());
  auto one = rewriter.getFloatAttr(type.getElementType(), 1.0);
  return rewriter.create<ConstantOp>(loc, DenseElementsAttr::get(ty, one));
}

/// (x - mean(x)) / sqrt(var(x) + eps) [* w] [+ b] -> layer_norm.
struct FuseLayerNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    Value centred, x;
    int64_t axis, meanAxis;
    double eps;
    if (!isRootMeanSquare(div.getRhs(), centred, axis, eps) ||
        centred != div.getLhs())
      return failure();
    auto sub = centred.getDefiningOp<SubOp>();
    if (!sub)
      return failure();
    x = sub.getLhs();
    if (trailingMean(sub.getRhs(), meanAxis) != x || meanAxis != axis)
      return failure();
    if (x.getType() != div.getType())
      return failure();
    Operation *last = div;
    Value scale, bias;
    if (div->hasOneUse())
      if (auto mul = dyn_cast<MulOp>(*div->user_begin())) {
        scale = mul.getLhs() == div.getResult() ? mul.getRhs() : mul.getLhs();
        last = mul;
        if (mul->hasOneUse())
          if (auto add = dyn_cast<AddOp>(*mul->user_begin())) {
            bias = add.getLhs() == mul.getResult() ? add.getRhs() : add.getLhs();
            last = add;
          }
      }
    if (last->getResult(0).getType() != x.getType())
      return failure();
    rewriter.setInsertionPoint(last);
    if (!scale)
      scale = onesLike(rewriter, div.getLoc(), x, axis);
    auto ln = rewriter.create<LayerNormOp>(
        last->getLoc(), x.getType(), x, scale, bias,
        rewriter.getI64IntegerAttr(axis), rewriter.getF64FloatAttr(eps));
    rewriter.replaceOp(last, ln.getResult());
    return success();
  }
};

/// x * rsqrt(mean(x^2) + eps) [* w], with rsqrt as reciprocal(sqrt) or
/// x / sqrt(...) -> rms_norm.
struct FuseRMSNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    if (isInnerFactor(root))
      return failure();
    SmallVector<Value> f;
    double scale;
    flattenProduct(root.getResult(), f, scale);
    if (scale != 1.0)
      return failure();
    for (size_t i = 0; i < f.size(); ++i) {
      Value x, inner;
      int64_t axis;
      double eps;
      SmallVector<Value> rest;
      if (Value denom = reciprocalOf(f[i])) {
        if (!isRootMeanSquare(denom, x, axis, eps))
          continue;
        // x must be one of the other factors.
        bool found = false;
        for (size_t j = 0; j < f.size(); ++j)
          if (j != i && !found && f[j] == x)
            found = true;
          else if (j != i)
            rest.push_back(f[j]);
        if (!found)
          continue;
      } else if (auto div = f[i].getDefiningOp<DivOp>()) {
        if (!isRootMeanSquare(div.getRhs(), x, axis, eps) ||
            div.getLhs() != x)
          continue;
        for (size_t j = 0; j < f.size(); ++j)
          if (j != i)
            rest.push_back(f[j]);
      } else {
        continue;
      }
      if (rest.size() > 1 || x.getType() != root.getType() || isCentred(x))
        continue;
      Value w = rest.empty() ? onesLike(rewriter, root.getLoc(), x, axis)
                             : rest[0];
      rewriter.replaceOpWithNewOp<RMSNormOp>(
          root, root.getType(), x, w, rewriter.getI64IntegerAttr(axis),
          rewriter.getF64FloatAttr(eps));
      return success();
    }
    return failure();
  }
};

/// Also recognise a bare x / sqrt(mean(x^2) + eps) (no scale).
struct FuseBareRMSNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    Value x;
    int64_t axis;
    double eps;
    if (!isRootMeanSquare(div.getRhs(), x, axis, eps) || div.getLhs() != x ||
        x.getType() != div.getType() || isCentred(x))
      return failure();
    // A mul consumer is matched (with its scale) by FuseRMSNorm.
    if (div->hasOneUse() && isa<MulOp>(*div->user_begin()))
      return failure();
    rewriter.replaceOpWithNewOp<RMSNormOp>(
        div, div.getType(), x, onesLike(rewriter, div.getLoc(), x, axis),
        rewriter.getI64IntegerAttr(axis), rewriter.getF64FloatAttr(eps));
    return success();
  }
};

struct FrenzyFusePatternsPass
    : frenzy::impl::FrenzyFusePatternsBase<FrenzyFusePatternsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseGelu, FuseSiluAndSwiGLU, FuseLayerNorm, FuseRMSNorm,
                 FuseBareRMSNorm>(&getContext());
    populateAttentionFusionPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
