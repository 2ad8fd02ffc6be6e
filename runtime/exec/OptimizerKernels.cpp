//===- OptimizerKernels.cpp - gradient clipping and parameter updates -----===//
//
// Updates write the parameter tensor in place and keep their moments in the
// step context's state, keyed by parameter name (the checkpoint format of
// the runtime issue stores exactly that map).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Kernels.h"

#include <cmath>

namespace frenzy::rt {

double clipScale(double norm, double maxNorm) {
  return maxNorm > 0 ? std::min(1.0, maxNorm / (norm + 1e-6)) : 1.0;
}

namespace {

void clipGradNorm(KernelArgs &a) {
  double sumsq = 0;
  for (Tensor *g : a.in) {
    const float *p = g->f32();
    for (int64_t i = 0, n = g->numel(); i < n; ++i)
      sumsq += double(p[i]) * p[i];
  }
  double norm = std::sqrt(sumsq);
  double scale = clipScale(norm, a.f("max_norm"));
  a.out[0]->f32()[0] = float(norm);
  a.out[1]->f32()[0] = float(scale);
}

ParamState &stateOf(KernelArgs &a, size_t moments) {
  ParamState &st = (*a.ctx.state)[a.s("name")];
  int64_t n = a.in[0]->numel();
  if (st.m.size() != size_t(n))
    st.m.assign(n, 0.0f);
  if (moments > 1 && st.v.size() != size_t(n))
    st.v.assign(n, 0.0f);
  return st;
}

void adamw(KernelArgs &a) {
  const plan::Optimizer &o = *a.ctx.optimizer;
  const float *g = a.in[1]->f32();
  ParamState &st = stateOf(a, 2);
  cpu::AdamWConfig cfg;
  cfg.lr = float(a.ctx.lr);
  cfg.beta1 = float(o.beta1());
  cfg.beta2 = float(o.beta2());
  cfg.eps = float(o.eps());
  cfg.weightDecay = float(a.f("weight_decay"));
  cfg.gradScale = a.in[2]->f32()[0];
  cpu::adamwUpdate(a.in[0]->f32(), g, st.m.data(), st.v.data(),
                   a.in[0]->numel(), cfg, a.ctx.step);
}

/// PyTorch's SGD: buf = momentum * buf + (g + wd * p) (buf = g at step 1),
/// p -= lr * buf.
void sgd(KernelArgs &a) {
  const plan::Optimizer &o = *a.ctx.optimizer;
  const float *g = a.in[1]->f32();
  const float scale = a.in[2]->f32()[0]; // gradient clipping
  ParamState &st = stateOf(a, 1);
  float *p = a.in[0]->f32();
  float lr = float(a.ctx.lr), mom = float(o.momentum());
  float wd = float(a.f("weight_decay"));
  for (int64_t i = 0, n = a.in[0]->numel(); i < n; ++i) {
    float d = g[i] * scale + wd * p[i];
    st.m[i] = a.ctx.step == 1 ? d : mom * st.m[i] + d;
    p[i] -= lr * st.m[i];
  }
}

} // namespace

void registerOptimizerKernels(KernelTable &t) {
#define FRENZY_OPTIMIZER_OP(Id, Name, Where, Kernel, ...) t[OpId::Id] = Kernel;
#include "Ops.def"
}

} // namespace frenzy::rt
