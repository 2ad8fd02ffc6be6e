//===- Workspace.cpp - scratch bytes of the CPU backend's kernels ---------===//
//
// Mirrors what runtime/exec asks of StepContext::scratchFloats, so that the
// liveness simulation predicts the executor's high-water mark. GPU kernels
// have other workspaces (flash attention keeps no probabilities); they are
// not modelled here.
//
//===----------------------------------------------------------------------===//
#include "Workspace.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

using namespace mlir;
using namespace frenzy;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static int64_t prod(ArrayRef<int64_t> s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

/// Rows and width of a normalisation over dims [axis, rank).
static std::pair<int64_t, int64_t> rows(Value x, int64_t axis) {
  ArrayRef<int64_t> s = shapeOf(x);
  return {prod(s.take_front(axis)), prod(s.drop_front(axis))};
}

/// Attention geometry: batch*heads, Tq, Tk, Dv, and the bytes of an expanded
/// mask when it is not one shared [Tq, Tk] matrix.
static void attention(Value q, Value k, Value v, Value mask, int64_t &bh,
                      int64_t &tq, int64_t &tk, int64_t &dv,
                      int64_t &maskBytes) {
  ArrayRef<int64_t> qs = shapeOf(q);
  tq = qs[qs.size() - 2];
  bh = prod(qs) / (tq * qs.back());
  tk = shapeOf(k)[qs.size() - 2];
  dv = shapeOf(v).back();
  maskBytes = 0;
  if (mask) {
    ArrayRef<int64_t> ms = shapeOf(mask);
    bool shared = prod(ms) == tq * tk && ms.size() >= 2 &&
                  ms[ms.size() - 2] == tq && ms.back() == tk;
    if (!shared) // expanded per head, in 8-byte words
      maskBytes = (bh * tq * tk *
                       elementBytes(getElementTypeOrSelf(mask.getType())) +
                   7) /
                  8 * 8;
  }
}

int64_t frenzy::cpuWorkspaceBytes(Operation *op) {
  const int64_t f = 4;
  if (auto ln = dyn_cast<LayerNormOp>(op)) {
    auto [n, c] = rows(ln.getInput(), ln.getAxis());
    return 2 * n * f;
  }
  if (auto g = dyn_cast<LayerNormGradOp>(op)) {
    auto [n, c] = rows(g.getInput(), g.getAxis());
    return (2 * n + n * c) * f;
  }
  if (auto a = dyn_cast<AttentionOp>(op)) {
    int64_t bh, tq, tk, dv, mb;
    attention(a.getQ(), a.getK(), a.getV(), a.getMask(), bh, tq, tk, dv, mb);
    return (bh * tq * tk + tq * tk) * f + mb;
  }
  if (auto a = dyn_cast<AttentionGradOp>(op)) {
    int64_t bh, tq, tk, dv, mb;
    attention(a.getQ(), a.getK(), a.getV(), a.getMask(), bh, tq, tk, dv, mb);
    return (bh * tq * tk + bh * tq * dv + 2 * tq * tk) * f + mb;
  }
  if (auto g = dyn_cast<CrossEntropyGradOp>(op))
    return prod(shapeOf(g.getLogits())) * f;
  return 0;
}
