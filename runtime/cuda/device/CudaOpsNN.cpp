//===- CudaOpsNN.cpp - contractions, norms, attention, loss, optimizer ----===//
//
// The adapters of runtime/exec/NNKernels.cpp, OptimizerKernels.cpp and
// ParallelKernels.cpp for the CUDA kernels (see CudaOps.h).
//
//===----------------------------------------------------------------------===//
#include "CudaOps.h"
#include "CudaOpsRegistry.h"
#include "NNArgs.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <limits>

namespace frenzy::rt::cuda {
namespace {

void zero(DevOp &d, void *p, int64_t bytes) {
  cudaError_t e = cudaMemsetAsync(p, 0, size_t(bytes), d.s);
  if (e != cudaSuccess)
    d.check(k::Status::error(std::string("cudaMemsetAsync: ") +
                             cudaGetErrorString(e)));
}

void matmul(DevOp &d) {
  d.check(k::matmul(*d.blas, d.s, d.t, d.out[0], d.outT(0).shape, d.in[0],
                    d.inT(0).shape, d.in[1], d.inT(1).shape));
}

void gemm(DevOp &d) {
  const Tensor &A = d.inT(0), &Y = d.outT(0);
  bool ta = d.args.i("transA"), tb = d.args.i("transB");
  int64_t M = Y.shape[0], N = Y.shape[1], K = ta ? A.shape[0] : A.shape[1];
  float beta = 0.0f;
  if (d.in.size() > 2) {
    d.check(k::expand(d.s, d.out[0], Y.shape, d.in[2], d.inT(2).shape,
                      k::floatBytes(d.t)));
    beta = float(d.args.f("beta"));
  }
  d.check(k::gemm(*d.blas, d.s, ta, tb, M, N, K, float(d.args.f("alpha")),
                  d.in[0], d.in[1], d.t, beta, d.out[0], d.t));
}

void layerNorm(DevOp &d) {
  auto [N, C] = normRows(d.args, d.inT(0));
  d.check(k::layerNormForward(d.s, d.t, d.out[0], nullptr, nullptr, d.in[0],
                              d.inF(1), d.in.size() > 2 ? d.inF(2) : nullptr,
                              N, C, float(d.args.f("epsilon"))));
}

void layerNormGrad(DevOp &d) {
  auto [N, C] = normRows(d.args, d.inT(1));
  // The CPU adapter zeroes the parameter gradients, then accumulates.
  zero(d, d.out[1], C * 4);
  zero(d, d.out[2], C * 4);
  void *ws = d.workspace(k::layerNormBackwardWorkspaceBytes(N, C));
  d.check(k::layerNormBackward(d.s, d.t, d.out[0], d.outF(1), d.outF(2),
                               d.in[0], d.in[1], d.inF(2), N, C,
                               float(d.args.f("epsilon")), ws));
}

void rmsNorm(DevOp &d) {
  auto [N, C] = normRows(d.args, d.inT(0));
  d.check(k::rmsNormForward(d.s, d.t, d.out[0], d.in[0], d.inF(1), N, C,
                            float(d.args.f("epsilon"))));
}

void rmsNormGrad(DevOp &d) {
  auto [N, C] = normRows(d.args, d.inT(1));
  zero(d, d.out[1], C * 4);
  void *ws = d.workspace(k::rmsNormBackwardWorkspaceBytes(N, C));
  d.check(k::rmsNormBackward(d.s, d.t, d.out[0], d.outF(1), d.in[0], d.in[1],
                             d.inF(2), N, C, float(d.args.f("epsilon")), ws));
}

/// [outer, n, inner] around `axis` of `shape`.
void around(const std::vector<int64_t> &shape, int64_t axis, int64_t &outer,
            int64_t &n, int64_t &inner) {
  int64_t r = int64_t(shape.size());
  if (axis < 0)
    axis += r;
  outer = dimProduct(shape, 0, size_t(axis));
  n = shape[size_t(axis)];
  inner = dimProduct(shape, size_t(axis) + 1, shape.size());
}

template <bool Log> void softmax(DevOp &d) {
  int64_t outer, n, inner;
  around(d.inT(0).shape, d.args.i("axis"), outer, n, inner);
  d.check(k::softmax(d.s, d.t, d.out[0], d.in[0], outer, n, inner, Log));
}

void softmaxGrad(DevOp &d) {
  int64_t outer, n, inner;
  around(d.inT(0).shape, d.args.i("axis"), outer, n, inner);
  d.check(k::softmaxGrad(d.s, d.t, d.out[0], d.in[0], d.in[1], outer, n,
                         inner, d.args.i("log")));
}

void swiglu(DevOp &d) {
  d.check(k::swiglu(d.s, d.t, d.out[0], d.in[0], d.in[1], d.inT(0).numel()));
}

/// attentionGeometry with the mask in device memory: a mask that is not one
/// [Tq, Tk] matrix is expanded per head on the device.
cpu::AttentionConfig attentionConfig(DevOp &d, size_t first) {
  cpu::AttentionConfig c = attentionGeometry(d.args, first);
  if (c.D > k::kMaxHeadDim || c.Dv > k::kMaxHeadDim)
    d.args.fail("the CUDA attention kernel takes head dims up to " +
                std::to_string(k::kMaxHeadDim) + "; use --backend=cpu");
  if (const Tensor *m = attentionMask(d.args, first)) {
    const void *data = d.in[first + 3];
    std::vector<int64_t> full = maskExpansion(c, d.inT(first), *m);
    if (full.empty()) {
      attachMask(c, m->dtype, data, 1);
      return c;
    }
    int eb = elementBytes(m->dtype);
    void *expanded = d.workspace(size_t(c.BH * c.Tq * c.Tk * eb));
    d.check(k::expand(d.s, expanded, full, data, m->shape, eb));
    attachMask(c, m->dtype, expanded, c.BH);
  }
  return c;
}

/// FRENZY_CUDA_ATTENTION=gemm: the tensor-core attention (cuBLASLt GEMMs
/// with f32 scores for a chunk of heads) where one head's scores fit
/// kAttentionCap of workspace. The default stays the flash kernels: they
/// are what the end-to-end runs on a GPU verified (docs/cuda.md); the GEMM
/// path has not run end to end yet.
constexpr size_t kAttentionCap = size_t(256) << 20;

size_t gemmAttentionBytes(const DevOp &d, const cpu::AttentionConfig &c,
                          bool backward) {
  const char *v = std::getenv("FRENZY_CUDA_ATTENTION");
  if (!v || std::string(v) != "gemm")
    return 0;
  size_t ws = k::attentionGemmWorkspaceBytes(c, d.t, backward, kAttentionCap);
  return ws <= kAttentionCap ? ws : 0;
}

void attention(DevOp &d) {
  cpu::AttentionConfig c = attentionConfig(d, 0);
  if (size_t ws = gemmAttentionBytes(d, c, false)) {
    d.check(k::attentionForwardGemm(*d.blas, d.s, d.t, d.out[0], d.in[0],
                                    d.in[1], d.in[2], c, d.workspace(ws), ws));
    return;
  }
  d.check(k::attentionForward(d.s, d.t, d.out[0], nullptr, d.in[0], d.in[1],
                              d.in[2], c));
}

void attentionGrad(DevOp &d) {
  cpu::AttentionConfig c = attentionConfig(d, 1);
  if (size_t ws = gemmAttentionBytes(d, c, true)) {
    d.check(k::attentionBackwardGemm(*d.blas, d.s, d.t, d.out[0], d.out[1],
                                     d.out[2], d.in[0], d.in[1], d.in[2],
                                     d.in[3], c, d.workspace(ws), ws));
    return;
  }
  void *ws = d.workspace(k::attentionBackwardWorkspaceBytes(c));
  d.check(k::attentionBackward(d.s, d.t, d.out[0], d.out[1], d.out[2],
                               d.in[0], d.in[1], d.in[2], d.in[3], c, ws));
}

std::pair<int64_t, int64_t> lossRows(DevOp &d, const Tensor &logits,
                                     const Tensor &labels) {
  if (logits.shape.size() != 2 || labels.shape.size() != 1)
    d.args.fail("expects logits [N, C] and labels [N], got " +
                logits.describe() + " and " + labels.describe());
  return {logits.shape[0], logits.shape[1]};
}

int64_t ignoreIndex(DevOp &d) {
  return d.args.i("ignore_index", std::numeric_limits<int64_t>::min());
}

void crossEntropy(DevOp &d) {
  auto [N, V] = lossRows(d, d.inT(0), d.inT(1));
  void *ws = d.workspace(k::crossEntropyWorkspaceBytes(N));
  d.check(k::crossEntropy(d.s, d.t, d.outF(0), nullptr, d.in[0],
                          static_cast<const int64_t *>(d.in[1]), N, V,
                          ignoreIndex(d), d.args.s("reduction") == "sum",
                          nullptr, d.badIndex, ws));
}

void crossEntropyGrad(DevOp &d) {
  auto [N, V] = lossRows(d, d.inT(1), d.inT(2));
  void *ws = d.workspace(k::crossEntropyWorkspaceBytes(N));
  d.check(k::crossEntropyGrad(d.s, d.t, d.out[0], d.in[1],
                              static_cast<const int64_t *>(d.in[2]), N, V,
                              ignoreIndex(d), d.args.s("reduction") == "sum",
                              d.inF(0), d.badIndex, ws));
}

void clipGradNorm(DevOp &d) {
  std::vector<const float *> grads;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < d.in.size(); ++i) {
    grads.push_back(d.inF(i));
    sizes.push_back(d.inT(i).numel());
  }
  void *ws = d.workspace(k::gradNormWorkspaceBytes(sizes.data(),
                                                   int(sizes.size())));
  d.check(k::clipGradNorm(d.s, grads.data(), sizes.data(), int(grads.size()),
                          d.args.f("max_norm"), d.outF(0), d.outF(1), ws));
}

void adamw(DevOp &d) {
  const plan::Optimizer &o = *d.args.ctx.optimizer;
  int64_t n = d.inT(0).numel();
  std::string name = d.args.s("name");
  cpu::AdamWConfig cfg;
  cfg.lr = float(d.args.ctx.lr);
  cfg.beta1 = float(o.beta1());
  cfg.beta2 = float(o.beta2());
  cfg.eps = float(o.eps());
  cfg.weightDecay = float(d.args.f("weight_decay"));
  d.check(k::adamw(d.s, d.inF(0), d.inF(1), d.moments(name, 0, n),
                   d.moments(name, 1, n), n, cfg, d.args.ctx.step,
                   d.inF(2)));
}

void sgd(DevOp &d) {
  const plan::Optimizer &o = *d.args.ctx.optimizer;
  int64_t n = d.inT(0).numel();
  d.check(k::sgd(d.s, d.inF(0), d.inF(1), d.moments(d.args.s("name"), 0, n),
                 n, float(d.args.ctx.lr), float(o.momentum()),
                 float(d.args.f("weight_decay")), d.args.ctx.step, d.inF(2)));
}

void tpAllReduce(DevOp &d) {
  if (d.inT(0).dtype != plan::F32)
    d.args.fail("tp_all_reduce sums f32 tensors only");
  cudaError_t e =
      cudaMemcpyAsync(d.out[0], d.in[0], size_t(d.inT(0).numel() * 4),
                      cudaMemcpyDeviceToDevice, d.s);
  if (e != cudaSuccess)
    d.check(k::Status::error(std::string("cudaMemcpyAsync: ") +
                             cudaGetErrorString(e)));
  if (d.allReduce)
    d.allReduce(d.outF(0), d.inT(0).numel());
}

/// Sequence parallelism (ParallelKernels.cpp says what each op does): a
/// device copy of this rank's chunk, or the group's collective on device
/// buffers (NCCL on the compute stream).
void copyDevice(DevOp &d, void *dst, const void *src, int64_t floats) {
  cudaError_t e = cudaMemcpyAsync(dst, src, size_t(floats * 4),
                                  cudaMemcpyDeviceToDevice, d.s);
  if (e != cudaSuccess)
    d.check(k::Status::error(std::string("cudaMemcpyAsync: ") +
                             cudaGetErrorString(e)));
}

void spScatter(DevOp &d) {
  int64_t n = d.outT(0).numel();
  copyDevice(d, d.out[0], d.inF(0) + d.args.ctx.tpRank * n, n);
}

void spAllGather(DevOp &d) {
  int64_t n = d.inT(0).numel();
  if (d.allGather)
    d.allGather(d.inF(0), d.outF(0), n);
  else if (d.outT(0).numel() == n)
    copyDevice(d, d.out[0], d.in[0], n);
  else
    d.args.fail("sp_all_gather outside a TP group");
}

void spReduceScatter(DevOp &d) {
  int64_t n = d.outT(0).numel();
  if (d.reduceScatter)
    d.reduceScatter(d.inF(0), d.outF(0), n);
  else if (d.inT(0).numel() == n)
    copyDevice(d, d.out[0], d.in[0], n);
  else
    d.args.fail("sp_reduce_scatter outside a TP group");
}

} // namespace

void addNNOps(CudaOpTable &t) {
#define FRENZY_NN_OP FRENZY_CUDA_FILL
#define FRENZY_OPTIMIZER_OP FRENZY_CUDA_FILL
#define FRENZY_PARALLEL_OP FRENZY_CUDA_FILL
#include "Ops.def"
}

} // namespace frenzy::rt::cuda
