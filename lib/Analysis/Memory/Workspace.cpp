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

/// Bytes of an attention mask expanded to one matrix per head (8-byte
/// words), when it is not one [Tq, Tk] matrix shared by all heads. The
/// kernels' own working rows are too small to count.
static int64_t expandedMaskBytes(Value q, Value k, Value mask) {
  if (!mask)
    return 0;
  ArrayRef<int64_t> qs = shapeOf(q), ms = shapeOf(mask);
  int64_t tq = qs[qs.size() - 2], tk = shapeOf(k)[qs.size() - 2];
  int64_t bh = prod(qs) / (tq * qs.back());
  bool shared = prod(ms) == tq * tk && ms.size() >= 2 &&
                ms[ms.size() - 2] == tq && ms.back() == tk;
  if (shared)
    return 0;
  return (bh * tq * tk * elementBytes(getElementTypeOrSelf(mask.getType())) +
          7) / 8 * 8;
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
  if (auto a = dyn_cast<AttentionOp>(op))
    return expandedMaskBytes(a.getQ(), a.getK(), a.getMask());
  if (auto a = dyn_cast<AttentionGradOp>(op))
    return expandedMaskBytes(a.getQ(), a.getK(), a.getMask());
  return 0; // cross_entropy_grad writes its softmax straight into dlogits
}
