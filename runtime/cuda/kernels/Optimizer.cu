//===- Optimizer.cu - AdamW, SGD and the global gradient norm -------------===//
//
// The updates are the CPU formulas element for element; AdamW's bias
// corrections are computed on the host exactly as the CPU computes them
// (float pow), so both backends use the same two constants. The clip
// factor is a device scalar (clip_grad_norm's output) read by each thread:
// no copy back between clipping and the update.
// The global norm sums squares in double: per tensor a fixed grid writes
// one partial per block, then one block adds the partials in order, so the
// norm is the same bits every run.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

#include <cmath>

namespace frenzy::cuda::kernels {
namespace {

__global__ void adamwKernel(float *param, const float *grad, float *m,
                            float *v, int64_t n, float b1, float b2, float lr,
                            float eps, float wd, float c1, float c2,
                            float gsHost, const float *gsDev) {
  const float gs = gsDev ? *gsDev : gsHost;
  FRENZY_GRID_STRIDE(i, n) {
    float g = grad[i] * gs;
    float mi = b1 * m[i] + (1.0f - b1) * g;
    float vi = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float mhat = mi / c1, vhat = vi / c2;
    param[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * param[i]);
  }
}

__global__ void sgdKernel(float *p, const float *g, float *buf, int64_t n,
                          float lr, float mom, float wd, bool first,
                          const float *gsDev) {
  const float scale = gsDev ? *gsDev : 1.0f;
  FRENZY_GRID_STRIDE(i, n) {
    float d = g[i] * scale + wd * p[i];
    buf[i] = first ? d : mom * buf[i] + d;
    p[i] -= lr * buf[i];
  }
}

constexpr int kNormThreads = 256;

unsigned normBlocks(int64_t n) {
  int64_t b = (n + kNormThreads * 8 - 1) / (kNormThreads * 8);
  return unsigned(b < 1 ? 1 : (b > 1024 ? 1024 : b));
}

__global__ void sumSquaresKernel(const float *x, int64_t n, double *partial) {
  __shared__ double shared[32];
  double acc = 0;
  FRENZY_GRID_STRIDE(i, n) acc += double(x[i]) * x[i];
  acc = blockSum(acc, shared);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = acc;
}

__global__ void finishNormKernel(const double *partial, int64_t count,
                                 double maxNorm, float *norm, float *scale) {
  __shared__ double shared[32];
  double acc = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    acc += partial[i];
  acc = blockSum(acc, shared);
  if (threadIdx.x == 0) {
    double nrm = sqrt(acc);
    *norm = float(nrm);
    // runtime/exec's clipScale: PyTorch's clip_grad_norm_ factor.
    *scale = float(maxNorm > 0 ? fmin(1.0, maxNorm / (nrm + 1e-6)) : 1.0);
  }
}

} // namespace

Status adamw(cudaStream_t s, float *param, const float *grad, float *m,
             float *v, int64_t n, const cpu::AdamWConfig &cfg, int64_t t,
             const float *gradScale) {
  if (n <= 0)
    return {};
  const float c1 = 1.0f - std::pow(cfg.beta1, float(t));
  const float c2 = 1.0f - std::pow(cfg.beta2, float(t));
  adamwKernel<<<blocksFor(n), kThreads, 0, s>>>(
      param, grad, m, v, n, cfg.beta1, cfg.beta2, cfg.lr, cfg.eps,
      cfg.weightDecay, c1, c2, cfg.gradScale, gradScale);
  return launched("adamw_update");
}

Status sgd(cudaStream_t s, float *param, const float *grad, float *buf,
           int64_t n, float lr, float momentum, float weightDecay,
           int64_t step, const float *gradScale) {
  if (n <= 0)
    return {};
  sgdKernel<<<blocksFor(n), kThreads, 0, s>>>(param, grad, buf, n, lr,
                                              momentum, weightDecay, step == 1,
                                              gradScale);
  return launched("sgd_update");
}

size_t gradNormWorkspaceBytes(const int64_t *sizesHost, int count) {
  size_t blocks = 0;
  for (int t = 0; t < count; ++t)
    blocks += normBlocks(sizesHost[t]);
  return blocks * sizeof(double);
}

Status clipGradNorm(cudaStream_t s, const float *const *gradsHost,
                    const int64_t *sizesHost, int count, double maxNorm,
                    float *norm, float *scale, void *workspace) {
  double *partial = static_cast<double *>(workspace);
  int64_t used = 0;
  for (int t = 0; t < count; ++t) {
    unsigned b = normBlocks(sizesHost[t]);
    sumSquaresKernel<<<b, kNormThreads, 0, s>>>(gradsHost[t], sizesHost[t],
                                                partial + used);
    used += b;
    Status st = launched("clip_grad_norm");
    if (!st.ok())
      return st;
  }
  finishNormKernel<<<1, 1024, 0, s>>>(partial, used, maxNorm, norm, scale);
  return launched("clip_grad_norm");
}

} // namespace frenzy::cuda::kernels
