//===- FrenzyCost.cpp - CostOpInterface: flops and bytes per op -----------===//
//
// Flop counts follow the usual convention of the scaling-law literature: a
// multiply-add is 2 flops; transcendental functions count as one flop, so the
// counts describe work, not latency. Per-element constants for fused ops are
// the arithmetic of their decomposed forms (documented at each op).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

using namespace mlir;
using namespace frenzy;

#include "frenzy/Dialect/Frenzy/IR/FrenzyInterfaces.cpp.inc"

static int64_t numElements(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : 0;
}

int64_t frenzy::detail::defaultFlops(Operation *op) {
  int64_t n = 0;
  for (Value r : op->getResults())
    n += numElements(r);
  return n;
}

int64_t frenzy::detail::operandBytes(Operation *op) {
  int64_t n = 0;
  for (Value v : op->getOperands())
    n += tensorBytes(v.getType());
  return n;
}

int64_t frenzy::detail::resultBytes(Operation *op) {
  int64_t n = 0;
  for (Value v : op->getResults())
    n += tensorBytes(v.getType());
  return n;
}

// Contractions: 2 flops per multiply-add.
int64_t MatMulOp::getFlops() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  int64_t k = lhs.getShape().back();
  return 2 * k * numElements(getResult());
}

int64_t GemmOp::getFlops() {
  auto a = cast<RankedTensorType>(getA().getType());
  int64_t k = getTransA() ? a.getShape()[0] : a.getShape()[1];
  int64_t mn = numElements(getResult());
  return 2 * k * mn + (getC() ? 2 * mn : 0);
}

// q k^T and p v are two contractions; softmax adds 5 per score, scale 1.
int64_t AttentionOp::getFlops() {
  auto q = cast<RankedTensorType>(getQ().getType());
  auto v = cast<RankedTensorType>(getV().getType());
  int64_t tk = v.getShape()[v.getRank() - 2];
  int64_t d = q.getShape().back(), dv = v.getShape().back();
  int64_t scores = numElements(getQ()) / std::max<int64_t>(1, d) * tk;
  return 2 * scores * d + 2 * scores * dv + 6 * scores;
}

// mean, subtract, square, mean, rsqrt-multiply, scale, shift.
int64_t LayerNormOp::getFlops() { return 8 * numElements(getInput()); }
// square, mean, rsqrt-multiply, scale.
int64_t RMSNormOp::getFlops() { return 5 * numElements(getInput()); }
// max, subtract, exp, sum, divide.
int64_t SoftmaxOp::getFlops() { return 5 * numElements(getInput()); }
int64_t LogSoftmaxOp::getFlops() { return 5 * numElements(getInput()); }
// tanh form: x^3, 2 mul-adds, tanh, add, 2 muls; erf form: div, erf, add, 2 muls.
int64_t GeluOp::getFlops() {
  return (getApproximate() == "tanh" ? 9 : 5) * numElements(getInput());
}
int64_t SiluOp::getFlops() { return 4 * numElements(getInput()); }
int64_t SwiGLUOp::getFlops() { return 5 * numElements(getGate()); }
// log-softmax over classes plus the pick and the reduction.
int64_t SoftmaxCrossEntropyLossOp::getFlops() {
  return 6 * numElements(getLogits());
}

// A reduction touches every input element once.
int64_t ReduceSumOp::getFlops() { return numElements(getInput()); }
int64_t ReduceMeanOp::getFlops() { return numElements(getInput()) + 1; }
int64_t ReduceMaxOp::getFlops() { return numElements(getInput()); }
int64_t ReduceMinOp::getFlops() { return numElements(getInput()); }

// Data movement computes nothing; its cost is in the bytes.
int64_t TransposeOp::getFlops() { return 0; }
int64_t ReshapeOp::getFlops() { return 0; }
int64_t ExpandOp::getFlops() { return 0; }
int64_t SqueezeOp::getFlops() { return 0; }
int64_t UnsqueezeOp::getFlops() { return 0; }
int64_t SliceOp::getFlops() { return 0; }
int64_t ConcatOp::getFlops() { return 0; }
int64_t SplitOp::getFlops() { return 0; }
int64_t GatherOp::getFlops() { return 0; }
// Only the gathered rows of the table are read, not the whole table: an
// embedding lookup touches batch*seq rows of a 50k-row matrix.
int64_t GatherOp::getBytesRead() {
  return tensorBytes(getIndices().getType()) + tensorBytes(getType());
}

// Values are loaded, not computed.
int64_t ParamOp::getFlops() { return 0; }
int64_t ConstantOp::getFlops() { return 0; }
