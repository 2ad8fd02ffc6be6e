//===- KernelContracts.cpp - what each kernel needs of its tensors --------===//
//
// Derived from the kernels in ElementwiseKernels.cpp, NNKernels.cpp,
// MovementKernels.cpp, OptimizerKernels.cpp and ParallelKernels.cpp and the
// runtime/cpu functions they call: each contract checks exactly what its
// kernel relies on to stay inside its buffers, plus the result shapes the
// op defines (a wrong result shape is a wrong answer even when in bounds).
//
//===----------------------------------------------------------------------===//
#include "KernelContracts.h"

#include "Tensor.h"

#include <algorithm>

namespace frenzy::rt {

namespace {

using C = ContractCheck;

bool isNumeric(plan::DType d) {
  return d == plan::F32 || d == plan::I64 || d == plan::I32 ||
         d == plan::BOOL;
}

/// An axis attribute in [0, rank).
int64_t axisIn(const C &c, const char *attrName, int64_t rank) {
  int64_t a = c.i(attrName);
  if (a < 0 || a >= rank)
    c.fail(std::string("attribute '") + attrName + "' = " +
           std::to_string(a) + " is outside [0, " + std::to_string(rank) +
           ")");
  return a;
}

void unary(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.out[0], c.shape(c.in[0]));
  c.stringAttr("approximate");
}

void activationGrad(C &c) {
  c.arity(2, 2, 1);
  for (auto *t : {c.in[0], c.in[1], c.out[0]})
    c.dtype(t, plan::F32);
  c.shapeIs(c.in[1], c.shape(c.in[0]));
  c.shapeIs(c.out[0], c.shape(c.in[0]));
  c.stringAttr("kind");
}

/// Operands broadcast exactly to the result's shape.
void broadcastTo(C &c, size_t first) {
  Shape s = c.shape(c.in[first]);
  for (size_t k = first + 1; k < c.in.size(); ++k)
    if (!broadcastShapes(Shape(s), c.shape(c.in[k]), s))
      c.fail("operands " + describeShape(*c.in[first]) + " and " +
             describeShape(*c.in[k]) + " do not broadcast");
  c.shapeIs(c.out[0], s);
}

void binary(C &c) {
  c.arity(2, 2, 1);
  plan::DType o = c.out[0]->dtype();
  if (o != plan::F32 && o != plan::I64 && o != plan::I32)
    c.fail(c.name(c.out[0]) + " must be f32, i64 or i32");
  for (auto *t : c.in)
    if (!isNumeric(t->dtype()))
      c.fail(c.name(t) + " has no CPU kernels");
  broadcastTo(c, 0);
}

void compare(C &c) {
  c.arity(2, 2, 1);
  if (!isNumeric(c.in[0]->dtype()) || c.in[1]->dtype() != c.in[0]->dtype())
    c.fail("operands must have one CPU dtype, got " +
           describeShape(*c.in[0]) + " and " + describeShape(*c.in[1]));
  c.dtype(c.out[0], plan::BOOL);
  broadcastTo(c, 0);
}

void logic(C &c) {
  c.arity(2, 2, 1);
  for (auto *t : {c.in[0], c.in[1], c.out[0]})
    c.dtype(t, plan::BOOL);
  broadcastTo(c, 0);
}

void logicalNot(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::BOOL);
  c.dtype(c.out[0], plan::BOOL);
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

void where(C &c) {
  c.arity(3, 3, 1);
  c.dtype(c.in[0], plan::BOOL);
  c.dtype(c.in[1], c.out[0]->dtype());
  c.dtype(c.in[2], c.out[0]->dtype());
  broadcastTo(c, 0);
}

void cast(C &c) {
  c.arity(1, 1, 1);
  for (auto *t : {c.in[0], c.out[0]})
    if (!isNumeric(t->dtype()))
      c.fail(c.name(t) + " has no CPU kernels");
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

void dropout(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.out[0], c.shape(c.in[0]));
  double r = c.f("ratio");
  if (!(r >= 0 && r < 1))
    c.fail("ratio " + std::to_string(r) + " is outside [0, 1)");
  c.i("training", 0);
  c.i("seed", 0);
  // An empty tp_split (the op's default) is written without values.
  auto split = c.instr.attrs().find("tp_split");
  if (split != c.instr.attrs().end() &&
      split->second.value_case() != plan::Attr::VALUE_NOT_SET) {
    std::vector<int64_t> s = c.ints("tp_split");
    if ((s.size() != 3 || s[0] < 0 || s[0] >= c.rank(c.in[0]) ||
                       s[1] < 1 || s[2] < 1 ||
                       c.shape(c.in[0])[size_t(s[0])] % s[2] != 0))
      c.fail("tp_split must be [dim, parts, blocks] with the input's dim a "
             "multiple of blocks");
  }
}

void trilu(C &c) {
  c.arity(1, 1, 1);
  if (c.rank(c.in[0]) < 2)
    c.fail(c.name(c.in[0]) + " needs at least 2 dims");
  c.dtype(c.out[0], c.in[0]->dtype());
  c.shapeIs(c.out[0], c.shape(c.in[0]));
  c.i("upper");
  c.i("k");
}

void reduce(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  std::vector<int64_t> axes = c.ints("axes");
  Shape s = c.shape(c.in[0]);
  int64_t kept = c.numel(c.in[0]);
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= int64_t(s.size()) ||
        (k && axes[k] <= axes[k - 1]))
      c.fail("axes must be sorted, distinct and in [0, " +
             std::to_string(s.size()) + ")");
    kept = s[axes[k]] ? kept / s[axes[k]] : 0;
  }
  // keepdims changes the shape, not the layout: only the count is fixed.
  if (std::all_of(s.begin(), s.end(), [](int64_t d) { return d > 0; }))
    c.numelIs(c.out[0], kept);
}

void unbroadcast(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  Shape s;
  if (!broadcastShapes(c.shape(c.out[0]), c.shape(c.in[0]), s) ||
      s != c.shape(c.in[0]))
    c.fail(c.name(c.out[0]) + " does not broadcast to " + c.name(c.in[0]));
}

void matmul(C &c) {
  c.arity(2, 2, 1);
  for (auto *t : {c.in[0], c.in[1], c.out[0]})
    c.dtype(t, plan::F32);
  Shape a = c.shape(c.in[0]), b = c.shape(c.in[1]);
  if (a.empty() || b.empty())
    c.fail("matmul operands need at least 1 dim");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1)
    a.insert(a.begin(), 1);
  if (b1)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    c.fail("inner dims differ: " + describeShape(*c.in[0]) + " x " +
           describeShape(*c.in[1]));
  Shape batch;
  if (!broadcastShapes(Shape(a.begin(), a.end() - 2),
                       Shape(b.begin(), b.end() - 2), batch))
    c.fail("batch dims of " + describeShape(*c.in[0]) + " and " +
           describeShape(*c.in[1]) + " do not broadcast");
  // A 2-d rhs is one GEMM over all lhs rows: no batch broadcasting then.
  if (b.size() == 2)
    batch.assign(a.begin(), a.end() - 2);
  Shape out = batch;
  if (!a1)
    out.push_back(a[a.size() - 2]);
  if (!b1)
    out.push_back(b.back());
  c.shapeIs(c.out[0], out);
}

void gemm(C &c) {
  c.arity(2, 3, 1);
  for (auto *t : c.in)
    c.dtype(t, plan::F32);
  c.dtype(c.out[0], plan::F32);
  bool ta = c.i("transA"), tb = c.i("transB");
  c.f("alpha");
  if (c.in.size() > 2)
    c.f("beta");
  if (c.rank(c.in[0]) != 2 || c.rank(c.in[1]) != 2 || c.rank(c.out[0]) != 2)
    c.fail("gemm operands and result must be matrices");
  Shape A = c.shape(c.in[0]), B = c.shape(c.in[1]);
  int64_t M = ta ? A[1] : A[0], K = ta ? A[0] : A[1];
  int64_t KB = tb ? B[1] : B[0], N = tb ? B[0] : B[1];
  if (K != KB)
    c.fail("inner dims differ: " + describeShape(*c.in[0]) + " x " +
           describeShape(*c.in[1]));
  c.shapeIs(c.out[0], {M, N});
  if (c.in.size() > 2) {
    Shape s;
    if (!broadcastShapes(c.shape(c.in[2]), {M, N}, s) || s != Shape{M, N})
      c.fail(c.name(c.in[2]) + " does not broadcast to [M, N]");
  }
}

/// Rows and row width of a normalisation of `x` over dims [axis, rank).
int64_t normWidth(C &c, const plan::Tensor *x) {
  int64_t axis = axisIn(c, "axis", c.rank(x));
  int64_t w = 1;
  for (int64_t d = axis; d < c.rank(x); ++d)
    w *= x->shape(d);
  c.f("epsilon");
  return w;
}

void layerNorm(C &c) {
  c.arity(2, 3, 1);
  for (auto *t : c.in)
    c.dtype(t, plan::F32);
  c.dtype(c.out[0], plan::F32);
  int64_t w = normWidth(c, c.in[0]);
  for (size_t k = 1; k < c.in.size(); ++k)
    if (c.numel(c.in[k]) != w)
      c.fail(c.name(c.in[k]) + " does not match the " + std::to_string(w) +
             " normalized elements");
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

/// Backward norms: operands dy, x, scale; results dx, dscale[, dbias].
void normGrad(C &c, size_t results) {
  c.arity(3, 3, results);
  for (auto *t : c.in)
    c.dtype(t, plan::F32);
  for (auto *t : c.out)
    c.dtype(t, plan::F32);
  int64_t w = normWidth(c, c.in[1]);
  c.shapeIs(c.in[0], c.shape(c.in[1]));
  c.numelIs(c.in[2], w);
  c.shapeIs(c.out[0], c.shape(c.in[1]));
  for (size_t k = 1; k < results; ++k)
    c.numelIs(c.out[k], w);
}
void layerNormGrad(C &c) { normGrad(c, 3); }
void rmsNormGrad(C &c) { normGrad(c, 2); }

void rmsNorm(C &c) {
  c.arity(2, 2, 1);
  for (auto *t : {c.in[0], c.in[1], c.out[0]})
    c.dtype(t, plan::F32);
  c.numelIs(c.in[1], normWidth(c, c.in[0]));
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

void softmax(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  axisIn(c, "axis", c.rank(c.in[0]));
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

void softmaxGrad(C &c) {
  c.arity(2, 2, 1);
  for (auto *t : {c.in[0], c.in[1], c.out[0]})
    c.dtype(t, plan::F32);
  axisIn(c, "axis", c.rank(c.in[0]));
  c.i("log");
  c.shapeIs(c.in[1], c.shape(c.in[0]));
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

void swiglu(C &c) {
  c.arity(2, 2, 1);
  for (auto *t : {c.in[0], c.in[1], c.out[0]})
    c.dtype(t, plan::F32);
  c.shapeIs(c.in[1], c.shape(c.in[0]));
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

/// q, k, v at operands first..first+2 and an optional mask after them;
/// returns the attention output's shape.
Shape attentionOperands(C &c, size_t first) {
  const plan::Tensor *q = c.in[first], *k = c.in[first + 1],
                     *v = c.in[first + 2];
  for (auto *t : {q, k, v})
    c.dtype(t, plan::F32);
  int64_t r = c.rank(q);
  if (r < 2 || c.rank(k) != r || c.rank(v) != r)
    c.fail("q, k and v need the same rank >= 2, got " + describeShape(*q) +
           ", " + describeShape(*k) + ", " + describeShape(*v));
  Shape qs = c.shape(q), ks = c.shape(k), vs = c.shape(v);
  Shape batch(qs.begin(), qs.end() - 2);
  int64_t Tq = qs[r - 2], D = qs[r - 1], Tk = ks[r - 2];
  if (Shape(ks.begin(), ks.end() - 2) != batch ||
      Shape(vs.begin(), vs.end() - 2) != batch || ks[r - 1] != D ||
      vs[r - 2] != Tk)
    c.fail("q, k and v disagree: " + describeShape(*q) + ", " +
           describeShape(*k) + ", " + describeShape(*v));
  if (Tq < 1 || D < 1 || Tk < 1)
    c.fail("empty attention " + describeShape(*q));
  if (c.in.size() > first + 3) {
    const plan::Tensor *m = c.in[first + 3];
    if (m->dtype() != plan::BOOL && m->dtype() != plan::F32)
      c.fail(c.name(m) + " (the mask) must be bool or f32");
    Shape full = batch, s;
    full.push_back(Tq);
    full.push_back(Tk);
    if (c.rank(m) > r || !broadcastShapes(c.shape(m), full, s) || s != full)
      c.fail(c.name(m) + " (the mask) does not broadcast to " +
             shapeText(full));
  }
  c.f("scale");
  double p = c.f("dropout", 0.0);
  if (!(p >= 0 && p < 1))
    c.fail("dropout " + std::to_string(p) + " is outside [0, 1)");
  if (c.i("tp_parts", 1) < 1)
    c.fail("tp_parts must be >= 1");
  c.i("causal", 0);
  c.i("seed", 0);
  Shape out = batch;
  out.push_back(Tq);
  out.push_back(vs[r - 1]);
  return out;
}

void attention(C &c) {
  c.arity(3, 4, 1);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.out[0], attentionOperands(c, 0));
}

void attentionGrad(C &c) {
  c.arity(4, 5, 3);
  c.dtype(c.in[0], plan::F32);
  c.shapeIs(c.in[0], attentionOperands(c, 1));
  for (size_t k = 0; k < 3; ++k) {
    c.dtype(c.out[k], plan::F32);
    c.shapeIs(c.out[k], c.shape(c.in[k + 1]));
  }
}

/// Logits [N, C] (f32) and labels [N] (i64) at operands first, first+1.
void lossOperands(C &c, size_t first) {
  const plan::Tensor *logits = c.in[first], *labels = c.in[first + 1];
  c.dtype(logits, plan::F32);
  c.dtype(labels, plan::I64);
  if (c.rank(logits) != 2 || c.rank(labels) != 1 ||
      labels->shape(0) != logits->shape(0))
    c.fail("expects logits [N, C] and labels [N], got " +
           describeShape(*logits) + " and " + describeShape(*labels));
  c.i("ignore_index", 0);
  c.stringAttr("reduction");
}

void crossEntropy(C &c) {
  c.arity(2, 2, 1);
  lossOperands(c, 0);
  c.dtype(c.out[0], plan::F32);
  c.numelIs(c.out[0], 1);
}

void crossEntropyGrad(C &c) {
  c.arity(3, 3, 1);
  c.dtype(c.in[0], plan::F32);
  c.numelIs(c.in[0], 1);
  lossOperands(c, 1);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.out[0], c.shape(c.in[1]));
}

/// reshape, squeeze, unsqueeze, tp_copy: a copy of the bytes.
void copy(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.out[0], c.in[0]->dtype());
  c.numelIs(c.out[0], c.numel(c.in[0]));
}

void tpAllReduce(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.out[0], c.shape(c.in[0]));
}

/// sp_scatter, sp_reduce_scatter: one chunk of the input's flattened
/// tokens; sp_gather, sp_all_gather: the group's chunks. Either way the
/// last dim is kept and the larger side's tokens are a whole multiple of
/// the smaller's (the TP degree).
void spChunks(C &c, const plan::Tensor *whole, const plan::Tensor *chunk) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  Shape w = c.shape(whole), k = c.shape(chunk);
  int64_t n = c.numel(chunk);
  if (w.empty() || k.empty() || w.back() != k.back() || n == 0 ||
      c.numel(whole) % n != 0)
    c.fail(c.name(chunk) + " is not a chunk of the tokens of " +
           c.name(whole));
}
void spScatter(C &c) { spChunks(c, c.in[0], c.out[0]); }
void spGather(C &c) { spChunks(c, c.out[0], c.in[0]); }

void transpose(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.out[0], c.in[0]->dtype());
  std::vector<int64_t> perm = c.ints("perm");
  Shape s = c.shape(c.in[0]), out;
  std::vector<bool> seen(s.size(), false);
  if (perm.size() != s.size())
    c.fail("perm has " + std::to_string(perm.size()) + " entries for " +
           c.name(c.in[0]));
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(s.size()) || seen[p])
      c.fail("perm is not a permutation of the operand's dims");
    seen[p] = true;
    out.push_back(s[p]);
  }
  c.shapeIs(c.out[0], out);
}

void expand(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.out[0], c.in[0]->dtype());
  Shape s;
  if (c.rank(c.in[0]) > c.rank(c.out[0]) ||
      !broadcastShapes(c.shape(c.in[0]), c.shape(c.out[0]), s) ||
      s != c.shape(c.out[0]))
    c.fail(c.name(c.in[0]) + " does not broadcast to " + c.name(c.out[0]));
}

/// The result shape of slicing `in`; every element it reads is inside.
Shape sliceShape(C &c, const Shape &in) {
  std::vector<int64_t> st = c.ints("starts"), lim = c.ints("limits"),
                       step = c.ints("strides");
  if (st.size() != in.size() || lim.size() != in.size() ||
      step.size() != in.size())
    c.fail("starts, limits and strides need one entry per dim of " +
           shapeText(in));
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t s = st[d], l = lim[d], k = step[d], n = in[d];
    if (k == 0)
      c.fail("stride 0 in dim " + std::to_string(d));
    if (l < -1 || l > n || s < 0 || s > n)
      c.fail("slice of dim " + std::to_string(d) + " [" + std::to_string(s) +
             ":" + std::to_string(l) + "] is outside [0, " +
             std::to_string(n) + "]");
    int64_t len = k > 0 ? (l - s + k - 1) / k : (s - l - k - 1) / -k;
    len = std::max<int64_t>(0, len);
    int64_t last = s + (len - 1) * k; // the last element read
    if (len > 0 && (last < 0 || last >= n || s >= n))
      c.fail("slice of dim " + std::to_string(d) + " reads outside [0, " +
             std::to_string(n) + ")");
    out[d] = len;
  }
  return out;
}

void slice(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.out[0], c.in[0]->dtype());
  c.shapeIs(c.out[0], sliceShape(c, c.shape(c.in[0])));
}

void sliceGrad(C &c) {
  c.arity(1, 1, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.in[0], sliceShape(c, c.shape(c.out[0])));
}

/// concat's operands / split's results: `parts` along `axis` of `whole`.
void joined(C &c, const plan::Tensor *whole,
            const std::vector<const plan::Tensor *> &parts) {
  int64_t axis = axisIn(c, "axis", c.rank(whole));
  int64_t sum = 0;
  for (auto *t : parts) {
    c.dtype(t, whole->dtype());
    Shape s = c.shape(t), w = c.shape(whole);
    if (s.size() != w.size())
      c.fail(c.name(t) + " and " + c.name(whole) + " differ in rank");
    sum += s[axis];
    s[axis] = w[axis] = 0;
    if (s != w)
      c.fail(c.name(t) + " and " + c.name(whole) +
             " differ outside the axis");
  }
  if (sum != whole->shape(axis))
    c.fail("the parts' axis sizes add up to " + std::to_string(sum) +
           ", not " + std::to_string(whole->shape(axis)));
}

void concat(C &c) {
  c.arity(1, size_t(-1), 1);
  joined(c, c.out[0], c.in);
}

void split(C &c) {
  if (c.in.size() != 1 || c.out.empty())
    c.fail("split takes 1 operand and at least 1 result");
  joined(c, c.in[0], c.out);
}

/// data.shape[:axis] + indices.shape + data.shape[axis+1:].
Shape gatherShape(C &c, const plan::Tensor *data,
                  const plan::Tensor *indices) {
  c.dtype(indices, plan::I64);
  int64_t axis = axisIn(c, "axis", c.rank(data));
  Shape d = c.shape(data), out(d.begin(), d.begin() + axis);
  for (int64_t x : indices->shape())
    out.push_back(x);
  out.insert(out.end(), d.begin() + axis + 1, d.end());
  return out;
}

void gather(C &c) {
  c.arity(2, 2, 1);
  c.dtype(c.out[0], c.in[0]->dtype());
  c.shapeIs(c.out[0], gatherShape(c, c.in[0], c.in[1]));
}

void gatherGrad(C &c) {
  c.arity(2, 2, 1);
  c.dtype(c.in[0], plan::F32);
  c.dtype(c.out[0], plan::F32);
  c.shapeIs(c.in[0], gatherShape(c, c.out[0], c.in[1]));
}

void clipGradNorm(C &c) {
  if (c.out.size() != 2)
    c.fail("clip_grad_norm writes 2 results (norm, scale)");
  for (auto *t : c.in)
    c.dtype(t, plan::F32);
  for (auto *t : c.out) {
    c.dtype(t, plan::F32);
    c.numelIs(t, 1);
  }
  c.f("max_norm");
}

void update(C &c) {
  c.arity(3, 3, 0);
  for (auto *t : c.in)
    c.dtype(t, plan::F32);
  c.numelIs(c.in[1], c.numel(c.in[0]));
  c.numelIs(c.in[2], 1);
  c.f("weight_decay");
  c.stringAttr("name");
}

} // namespace

const ContractTable &kernelContracts() {
  // Ops.def's Contract column: an op without a contract does not compile.
  static const ContractTable table = [] {
    ContractTable t;
#define FRENZY_OP(Id, Name, Where, Kernel, Contract, ...) t[OpId::Id] = Contract;
#include "Ops.def"
    return t;
  }();
  return table;
}

} // namespace frenzy::rt
