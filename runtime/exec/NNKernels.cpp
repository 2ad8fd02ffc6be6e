//===- NNKernels.cpp - contractions, norms, softmax, attention, loss ------===//
//
// Backward kernels recompute what the forward op kept only transiently
// (layer-norm statistics, softmax probabilities, attention scores), matching
// the compiler's rules: the plan's operands are exactly what was saved.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Kernels.h"
#include "NNArgs.h"
#include "TensorOps.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace frenzy::rt {
namespace {

void matmul(KernelArgs &a) {
  cpu::matmulF32(a.out[0]->f32(), a.out[0]->shape, a.in[0]->f32(),
                 a.in[0]->shape, a.in[1]->f32(), a.in[1]->shape);
}

void gemm(KernelArgs &a) {
  const Tensor &A = *a.in[0], &B = *a.in[1];
  Tensor &Y = *a.out[0];
  bool ta = a.i("transA"), tb = a.i("transB");
  int64_t M = Y.shape[0], N = Y.shape[1], K = ta ? A.shape[0] : A.shape[1];
  float beta = 0.0f;
  if (a.in.size() > 2) {
    cpu::expand(Y.data(), Y.shape, a.in[2]->data(), a.in[2]->shape, 4);
    beta = float(a.f("beta"));
  }
  cpu::gemm(ta, tb, M, N, K, float(a.f("alpha")), A.f32(), B.f32(), beta,
            Y.f32());
}

void layerNorm(KernelArgs &a) {
  const Tensor &x = *a.in[0];
  auto [N, C] = normRows(a, x);
  float *stats = a.ctx.scratchFloats(2 * N);
  cpu::layerNormForward(a.out[0]->f32(), stats, stats + N, x.f32(),
                        a.in[1]->f32(), a.in.size() > 2 ? a.in[2]->f32() : nullptr,
                        N, C, float(a.f("epsilon")));
}

void layerNormGrad(KernelArgs &a) {
  const Tensor &dy = *a.in[0], &x = *a.in[1], &scale = *a.in[2];
  auto [N, C] = normRows(a, x);
  float *stats = a.ctx.scratchFloats(2 * N + N * C);
  cpu::layerNormForward(stats + 2 * N, stats, stats + N, x.f32(), scale.f32(),
                        nullptr, N, C, float(a.f("epsilon")));
  std::fill(a.out[1]->f32(), a.out[1]->f32() + C, 0.0f);
  std::fill(a.out[2]->f32(), a.out[2]->f32() + C, 0.0f);
  cpu::layerNormBackward(a.out[0]->f32(), a.out[1]->f32(), a.out[2]->f32(),
                         dy.f32(), x.f32(), scale.f32(), stats, stats + N, N, C);
}

void rmsNorm(KernelArgs &a) {
  auto [N, C] = normRows(a, *a.in[0]);
  cpu::rmsNormForward(a.out[0]->f32(), a.in[0]->f32(), a.in[1]->f32(), N, C,
                      float(a.f("epsilon")));
}

void rmsNormGrad(KernelArgs &a) {
  auto [N, C] = normRows(a, *a.in[1]);
  std::fill(a.out[1]->f32(), a.out[1]->f32() + C, 0.0f);
  cpu::rmsNormBackward(a.out[0]->f32(), a.out[1]->f32(), a.in[0]->f32(),
                       a.in[1]->f32(), a.in[2]->f32(), N, C,
                       float(a.f("epsilon")));
}

template <bool Log> void softmax(KernelArgs &a) {
  cpu::softmaxF32(a.out[0]->f32(), a.in[0]->f32(), a.in[0]->shape, a.i("axis"),
                  Log);
}

void softmaxGrad(KernelArgs &a) {
  cpu::softmaxGradF32(a.out[0]->f32(), a.in[0]->f32(), a.in[1]->f32(),
                      a.in[0]->shape, a.i("axis"), a.i("log"));
}

void swiglu(KernelArgs &a) {
  int64_t n = a.in[0]->numel();
  float *y = a.out[0]->f32();
  const float *up = a.in[1]->f32();
  cpu::unaryF32(cpu::UnaryKind::Silu, y, a.in[0]->f32(), n);
  for (int64_t i = 0; i < n; ++i)
    y[i] *= up[i];
}

/// attentionGeometry with the mask in host memory: a mask that is not one
/// [Tq, Tk] matrix shared by all heads is expanded into `expanded`.
cpu::AttentionConfig attentionConfig(KernelArgs &a, size_t first,
                                     std::vector<uint64_t> &expanded) {
  cpu::AttentionConfig c = attentionGeometry(a, first);
  if (const Tensor *m = attentionMask(a, first)) {
    std::vector<int64_t> full = maskExpansion(c, *a.in[first], *m);
    if (full.empty()) {
      attachMask(c, m->dtype, m->data(), 1);
      return c;
    }
    int eb = elementBytes(m->dtype);
    expanded.assign((c.BH * c.Tq * c.Tk * eb + 7) / 8, 0);
    cpu::expand(expanded.data(), full, m->data(), m->shape, eb);
    attachMask(c, m->dtype, expanded.data(), c.BH);
  }
  return c;
}

void attention(KernelArgs &a) {
  std::vector<uint64_t> expanded;
  cpu::AttentionConfig c = attentionConfig(a, 0, expanded);
  a.ctx.workspaceBytes = int64_t(expanded.size() * sizeof(uint64_t));
  cpu::attentionForward(a.out[0]->f32(), nullptr, a.in[0]->f32(),
                        a.in[1]->f32(), a.in[2]->f32(), c);
}

/// Backward recomputes the probabilities row by row from q and k (the
/// forward's output is not needed).
void attentionGrad(KernelArgs &a) {
  std::vector<uint64_t> expanded;
  cpu::AttentionConfig c = attentionConfig(a, 1, expanded);
  a.ctx.workspaceBytes = int64_t(expanded.size() * sizeof(uint64_t));
  cpu::attentionBackward(a.out[0]->f32(), a.out[1]->f32(), a.out[2]->f32(),
                         a.in[0]->f32(), nullptr, a.in[1]->f32(),
                         a.in[2]->f32(), a.in[3]->f32(), c);
}

/// Logits [N, C] and labels [N]; the class dim must be last.
std::pair<int64_t, int64_t> lossRows(KernelArgs &a, const Tensor &logits,
                                     const Tensor &labels) {
  if (logits.shape.size() != 2 || labels.shape.size() != 1)
    a.fail("expects logits [N, C] and labels [N], got " + logits.describe() +
           " and " + labels.describe());
  return {logits.shape[0], logits.shape[1]};
}

int64_t ignoreIndex(KernelArgs &a) {
  return a.i("ignore_index", std::numeric_limits<int64_t>::min());
}

/// The factor from the mean loss the kernels compute to the op's reduction:
/// 1 for mean, the number of counted (not ignored) rows for sum.
float reductionFactor(KernelArgs &a, const Tensor &labels, int64_t N,
                      int64_t ignore) {
  if (a.s("reduction") != "sum")
    return 1.0f;
  int64_t counted = 0;
  for (int64_t i = 0; i < N; ++i)
    counted += labels.i64()[i] != ignore;
  return float(counted);
}

void crossEntropy(KernelArgs &a) {
  const Tensor &logits = *a.in[0], &labels = *a.in[1];
  auto [N, V] = lossRows(a, logits, labels);
  int64_t ignore = ignoreIndex(a);
  for (int64_t i = 0; i < N; ++i) {
    int64_t t = labels.i64()[i];
    if (t != ignore && (t < 0 || t >= V))
      a.fail("label " + std::to_string(t) + " at row " + std::to_string(i) +
             " is outside [0, " + std::to_string(V) + ")");
  }
  float loss =
      cpu::softmaxCrossEntropyLoss(logits.f32(), labels.i64(), N, V, ignore);
  a.out[0]->f32()[0] = loss * reductionFactor(a, labels, N, ignore);
}

void crossEntropyGrad(KernelArgs &a) {
  const Tensor &logits = *a.in[1], &labels = *a.in[2];
  auto [N, V] = lossRows(a, logits, labels);
  int64_t ignore = ignoreIndex(a);
  float dloss = a.in[0]->f32()[0] * reductionFactor(a, labels, N, ignore);
  cpu::softmaxCrossEntropyBackward(a.out[0]->f32(), logits.f32(),
                                   labels.i64(), N, V, ignore, dloss);
}

} // namespace

int64_t dimProduct(const std::vector<int64_t> &shape, size_t from,
                   size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i)
    n *= shape[i];
  return n;
}

std::pair<int64_t, int64_t> normRows(const KernelArgs &a, const Tensor &x) {
  size_t axis = size_t(a.i("axis"));
  return {dimProduct(x.shape, 0, axis),
          dimProduct(x.shape, axis, x.shape.size())};
}

cpu::AttentionConfig attentionGeometry(const KernelArgs &a, size_t first) {
  const Tensor &q = *a.in[first], &k = *a.in[first + 1], &v = *a.in[first + 2];
  size_t r = q.shape.size();
  cpu::AttentionConfig c;
  c.Tq = q.shape[r - 2];
  c.D = q.shape[r - 1];
  c.Tk = k.shape[r - 2];
  c.Dv = v.shape[r - 1];
  c.BH = q.numel() / (c.Tq * c.D);
  if (k.numel() != c.BH * c.Tk * c.D || v.numel() != c.BH * c.Tk * c.Dv)
    a.fail("q, k and v must have the same batch and head dims (got " +
           q.describe() + ", " + k.describe() + ", " + v.describe() + ")");
  c.scale = float(a.f("scale"));
  c.causal = a.i("causal", 0);
  c.dropout = float(a.f("dropout", 0.0));
  c.seed = a.ctx.streamSeed(a.i("seed", 0));
  // Heads are dim -3 of [batch, heads, T, D]; without it every bh is its
  // own row.
  c.headsLocal = r >= 4 ? q.shape[r - 3] : 1;
  c.headsTotal = c.headsLocal * a.i("tp_parts", 1);
  c.headStart = a.ctx.tpRank * c.headsLocal;
  c.firstRow = a.ctx.microBatch && r >= 4
                   ? a.ctx.sampleOffset
                   : int64_t(a.ctx.elementOffset(c.BH));
  return c;
}

const Tensor *attentionMask(const KernelArgs &a, size_t first) {
  return a.in.size() > first + 3 ? a.in[first + 3] : nullptr;
}

std::vector<int64_t> maskExpansion(const cpu::AttentionConfig &c,
                                   const Tensor &q, const Tensor &mask) {
  size_t mr = mask.shape.size();
  if (mask.numel() == c.Tq * c.Tk && mr >= 2 && mask.shape[mr - 2] == c.Tq &&
      mask.shape[mr - 1] == c.Tk)
    return {};
  std::vector<int64_t> full(q.shape.begin(), q.shape.end() - 2);
  full.push_back(c.Tq);
  full.push_back(c.Tk);
  return full;
}

void attachMask(cpu::AttentionConfig &c, plan::DType dtype, const void *data,
                int64_t heads) {
  c.maskHeads = heads;
  if (dtype == plan::BOOL)
    c.mask = static_cast<const uint8_t *>(data);
  else
    c.bias = static_cast<const float *>(data);
}

void registerNNKernels(KernelTable &t) {
#define FRENZY_NN_OP(Id, Name, Where, Kernel, ...) t[OpId::Id] = Kernel;
#include "Ops.def"
}

} // namespace frenzy::rt
