//===- CudaKernels.h - host API of the CUDA kernels -------------*- C++ -*-===//
//
// One host function per kernel of the CUDA backend, mirroring what the CPU
// kernels (runtime/cpu/Kernels.h, TensorOps.h) and their executor adapters
// (runtime/exec/*Kernels.cpp) compute. The executor (runtime/cuda, issue 16)
// reads a plan instruction's attributes exactly as the CPU adapter does and
// calls the function here with device pointers.
//
// Contract:
//  - Every pointer is a device pointer unless named `host`; buffers are
//    contiguous row-major, as on the CPU. Shapes and attributes are host
//    values. Nothing here allocates, synchronises or reads device memory
//    back: all work is enqueued on `stream`. Where a kernel needs scratch,
//    a `...WorkspaceBytes()` function gives the size and the caller passes
//    a device buffer of at least that many bytes (its own allocator counts
//    it toward the high-water mark).
//  - The same enums as the CPU kernels (cpu::UnaryKind, cpu::BinaryKind,
//    ..., cpu::AttentionConfig, cpu::AdamWConfig) so the attribute decoding
//    is shared; AttentionConfig's mask/bias pointers are device pointers.
//  - Floating activations may be f32, bf16 or f16 (FloatType); parameters,
//    their gradients, optimizer moments, norm statistics and losses are
//    always f32 (the fp32 master weights of the precision policy). Math is
//    f32 inside every kernel; only loads and stores convert.
//  - Backward kernels accumulate (+=) into parameter gradients and
//    overwrite activation gradients, as on the CPU.
//  - Sums are deterministic: fixed-order reductions, no floating atomics,
//    so a run repeats bit for bit (embedding and gather backward included).
//  - Data-dependent errors (a token id or label outside its range) cannot
//    be returned without a sync: the kernel writes the first bad position
//    into a caller-owned device int64 `badIndex` (initialise it to -1) that
//    the executor reads back when it next synchronises, then fails with one
//    line naming the instruction.
//  - A Status is returned for launch and cuBLAS failures (an empty message
//    is success); asynchronous faults surface at the caller's next sync.
//  - Dropout draws rng::uniform(seed, element) from CounterRng.h, the CPU
//    backend's stream: for the same seed and element offset the masks are
//    identical on both backends.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_KERNELS_CUDAKERNELS_H
#define FRENZY_RUNTIME_CUDA_KERNELS_CUDAKERNELS_H

#include "Kernels.h"   // runtime/cpu: AttentionConfig, AdamWConfig
#include "TensorOps.h" // runtime/cpu: the op kinds, Shape, DType

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::cuda::kernels {

using cpu::Shape;

/// Storage type of floating activations; compute is always f32.
enum class FloatType : int { F32 = 0, BF16 = 1, F16 = 2 };
int floatBytes(FloatType t);
const char *floatTypeName(FloatType t);

/// Success, or one line naming the kernel and the CUDA / cuBLAS error.
class Status {
public:
  Status() = default;
  static Status error(std::string msg) {
    Status s;
    s.msg = std::move(msg);
    return s;
  }
  bool ok() const { return msg.empty(); }
  const std::string &message() const { return msg; }

private:
  std::string msg;
};

/// Handles the GEMMs need, owned by the caller (one set per device/stream):
/// cuBLASLt for the matmuls, with a workspace for its algorithms.
struct BlasHandles {
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0; // 32 MiB recommended on Hopper
};

//===--- contractions (Gemm.cu) -------------------------------------------===//

/// C[M,N] = alpha * op(A) op(B) + beta * C, row-major, as cpu::gemm, for
/// `batch` matrix triples `stride*` elements apart (stride 0: the same
/// matrix for every batch). A and B share abType; C is f32 or abType;
/// accumulation is f32 (tensor cores for bf16/f16; fp32 stays IEEE fp32,
/// no TF32, so results match the CPU within 1e-5).
Status gemm(const BlasHandles &h, cudaStream_t stream, bool transA,
            bool transB, int64_t M, int64_t N, int64_t K, float alpha,
            const void *A, const void *B, FloatType abType, float beta,
            void *C, FloatType cType, int64_t batch = 1, int64_t strideA = 0,
            int64_t strideB = 0, int64_t strideC = 0);

/// numpy matmul with broadcast batch dims (cpu::matmulF32): a [..., M, K],
/// b [..., K, N], 1-d operands promoted; out outShape. All three of type t.
Status matmul(const BlasHandles &h, cudaStream_t stream, FloatType t,
              void *out, const Shape &outShape, const void *a,
              const Shape &aShape, const void *b, const Shape &bShape);

//===--- elementwise (Elementwise.cu) -------------------------------------===//

Status unary(cudaStream_t s, cpu::UnaryKind k, FloatType t, void *out,
             const void *in, int64_t n);
/// din = dout * f'(x) for Silu, GeluTanh, GeluErf (activation_grad).
Status unaryGrad(cudaStream_t s, cpu::UnaryKind k, FloatType t, void *din,
                 const void *dout, const void *x, int64_t n);
/// Broadcasting binary op (rank <= 8), all operands of type t.
Status binary(cudaStream_t s, cpu::BinaryKind k, FloatType t, void *out,
              const Shape &outShape, const void *a, const Shape &aShape,
              const void *b, const Shape &bShape);
Status binaryI64(cudaStream_t s, cpu::BinaryKind k, int64_t *out,
                 const Shape &outShape, const int64_t *a, const Shape &aShape,
                 const int64_t *b, const Shape &bShape);
/// Comparison writing 0/1 bytes; operands f32 (isF32) or int64.
Status compare(cudaStream_t s, cpu::CompareKind k, bool isF32, uint8_t *out,
               const Shape &outShape, const void *a, const Shape &aShape,
               const void *b, const Shape &bShape);
Status logic(cudaStream_t s, cpu::LogicKind k, uint8_t *out,
             const Shape &outShape, const uint8_t *a, const Shape &aShape,
             const uint8_t *b, const Shape &bShape);
Status logicalNot(cudaStream_t s, uint8_t *out, const uint8_t *in, int64_t n);
/// out = cond ? a : b with broadcasting; elements of elemBytes (1, 2, 4, 8).
Status where(cudaStream_t s, void *out, const Shape &outShape,
             const uint8_t *cond, const Shape &condShape, const void *a,
             const Shape &aShape, const void *b, const Shape &bShape,
             int elemBytes);
/// swiglu: out = silu(gate) * up.
Status swiglu(cudaStream_t s, FloatType t, void *out, const void *gate,
              const void *up, int64_t n);
/// Inverted dropout, element i drawing rng::uniform(seed, first + i)
/// (cpu::dropoutF32); ratio <= 0 copies.
Status dropout(cudaStream_t s, FloatType t, void *out, const void *in,
               int64_t n, float ratio, uint64_t seed, uint64_t first);
/// Keep a triangle of every trailing [rows, cols] matrix (cpu::trilu).
Status trilu(cudaStream_t s, void *out, const void *in, int64_t batch,
             int64_t rows, int64_t cols, bool upper, int64_t k, int elemBytes);

//===--- casts and precision (Cast.cu) ------------------------------------===//

/// The cast op among the CPU dtypes (float -> int truncates, -> bool != 0).
Status cast(cudaStream_t s, void *out, cpu::DType outType, const void *in,
            cpu::DType inType, int64_t n);
/// Precision casts f32 <-> bf16 / f16 (round to nearest even).
Status castFloat(cudaStream_t s, void *out, FloatType outType, const void *in,
                 FloatType inType, int64_t n);
/// x *= *scale (a device scalar, e.g. the clip factor or 1/loss scale).
Status scaleBy(cudaStream_t s, float *x, int64_t n, const float *scale);
/// Loss scaling for fp16: grads *= 1 / *lossScale over a list of f32
/// tensors; *foundInf = 1 when any result is inf or NaN (left 0 otherwise;
/// the caller zeroes it before the first call of a step).
Status unscaleAndCheck(cudaStream_t s, float *const *gradsHost,
                       const int64_t *sizesHost, int count,
                       const float *lossScale, int *foundInf);
/// Dynamic loss-scale update after a step (PyTorch GradScaler's rule): on
/// inf, scale *= backoff and the good-step counter resets; after
/// `interval` good steps, scale *= growth.
Status updateLossScale(cudaStream_t s, float *lossScale, int *goodSteps,
                       const int *foundInf, float growth, float backoff,
                       int interval);

//===--- reductions (Reduce.cu) -------------------------------------------===//

/// cpu::reduceF32 over sorted distinct axes; sums in double, fixed order.
Status reduce(cudaStream_t s, cpu::ReduceKind k, float *out, const float *in,
              const Shape &inShape, const std::vector<int64_t> &axes);
/// The adjoint of broadcasting (cpu::sumToShapeF32; `unbroadcast`).
Status sumToShape(cudaStream_t s, float *out, const Shape &outShape,
                  const float *in, const Shape &inShape);

//===--- data movement (Movement.cu), elements of elemBytes bytes ---------===//

Status transpose(cudaStream_t s, void *out, const void *in,
                 const Shape &inShape, const std::vector<int64_t> &perm,
                 int elemBytes);
Status expand(cudaStream_t s, void *out, const Shape &outShape,
              const void *in, const Shape &inShape, int elemBytes);
Status slice(cudaStream_t s, void *out, const void *in, const Shape &inShape,
             const std::vector<int64_t> &starts,
             const std::vector<int64_t> &limits,
             const std::vector<int64_t> &strides, int elemBytes);
Status sliceGrad(cudaStream_t s, float *din, const Shape &inShape,
                 const float *dout, const std::vector<int64_t> &starts,
                 const std::vector<int64_t> &limits,
                 const std::vector<int64_t> &strides);
Status concat(cudaStream_t s, void *out, const std::vector<const void *> &inputs,
              const std::vector<Shape> &shapes, int64_t axis, int elemBytes);
Status split(cudaStream_t s, const std::vector<void *> &outputs,
             const void *in, const Shape &inShape, int64_t axis,
             const std::vector<int64_t> &sizes, int elemBytes);
/// ONNX Gather (negative indices from the end); a bad index goes to
/// *badIndex (see the contract above).
Status gather(cudaStream_t s, void *out, const void *data,
              const Shape &dataShape, const int64_t *indices,
              int64_t numIndices, int64_t axis, int elemBytes,
              int64_t *badIndex);
/// ddata = 0, then scatter-add dout; deterministic (repeats in index order).
Status gatherGrad(cudaStream_t s, float *ddata, const Shape &dataShape,
                  const float *dout, const int64_t *indices,
                  int64_t numIndices, int64_t axis);

//===--- normalisation and softmax (Norm.cu, Softmax.cu) ------------------===//

/// cpu::layerNormForward over N rows of C; x/out of type t, weight/bias
/// f32 (bias may be null); mean/rstd f32 [N] (may be null).
Status layerNormForward(cudaStream_t s, FloatType t, void *out, float *mean,
                        float *rstd, const void *x, const float *weight,
                        const float *bias, int64_t N, int64_t C, float eps);
size_t layerNormBackwardWorkspaceBytes(int64_t N, int64_t C);
/// layer_norm_grad: recomputes the statistics from x; dx overwritten,
/// dweight/dbias (f32 [C], dbias may be null) accumulate.
Status layerNormBackward(cudaStream_t s, FloatType t, void *dx,
                         float *dweight, float *dbias, const void *dout,
                         const void *x, const float *weight, int64_t N,
                         int64_t C, float eps, void *workspace);
Status rmsNormForward(cudaStream_t s, FloatType t, void *out, const void *x,
                      const float *scale, int64_t N, int64_t C, float eps);
size_t rmsNormBackwardWorkspaceBytes(int64_t N, int64_t C);
/// dx overwritten, dscale accumulates (cpu::rmsNormBackward).
Status rmsNormBackward(cudaStream_t s, FloatType t, void *dx, float *dscale,
                       const void *dout, const void *x, const float *scale,
                       int64_t N, int64_t C, float eps, void *workspace);
/// Softmax or log-softmax over the middle dim of [outer, n, inner].
Status softmax(cudaStream_t s, FloatType t, void *out, const void *in,
               int64_t outer, int64_t n, int64_t inner, bool log);
Status softmaxGrad(cudaStream_t s, FloatType t, void *din, const void *dout,
                   const void *y, int64_t outer, int64_t n, int64_t inner,
                   bool log);

//===--- loss (CrossEntropy.cu) -------------------------------------------===//

size_t crossEntropyWorkspaceBytes(int64_t N);
/// Mean (or, reductionSum, summed) cross-entropy of N rows of V logits
/// into *loss (f32 scalar); rows whose target is ignoreIndex do not count.
/// When dlogits is not null the same pass writes the gradient for an
/// upstream dloss (device scalar, 1.0 when null): the fused form. Labels
/// outside [0, V) go to *badIndex.
Status crossEntropy(cudaStream_t s, FloatType t, float *loss, void *dlogits,
                    const void *logits, const int64_t *targets, int64_t N,
                    int64_t V, int64_t ignoreIndex, bool reductionSum,
                    const float *dloss, int64_t *badIndex, void *workspace);
/// cross_entropy_grad alone (loss may be null in crossEntropy; this is
/// crossEntropy with loss == null).
Status crossEntropyGrad(cudaStream_t s, FloatType t, void *dlogits,
                        const void *logits, const int64_t *targets, int64_t N,
                        int64_t V, int64_t ignoreIndex, bool reductionSum,
                        const float *dloss, int64_t *badIndex,
                        void *workspace);

//===--- embedding (Embedding.cu) -----------------------------------------===//

/// out[n, :] = table[ids[n], :]; table f32, out of type t.
Status embeddingForward(cudaStream_t s, FloatType t, void *out,
                        const float *table, const int64_t *ids, int64_t N,
                        int64_t V, int64_t C, int64_t *badIndex);
/// dtable[ids[n], :] += dout[n, :], deterministic: each row of dtable sums
/// its tokens in order n = 0..N-1 (bit-identical to the CPU loop for f32).
Status embeddingBackward(cudaStream_t s, FloatType t, float *dtable,
                         const void *dout, const int64_t *ids, int64_t N,
                         int64_t V, int64_t C);

//===--- attention (Attention.cu) -----------------------------------------===//

/// Flash-style: q/k/v/out of type t, online softmax over key tiles, never a
/// [Tq, Tk] matrix. lse (f32 [BH, Tq], may be null) receives each row's
/// log-sum-exp for the backward pass. D, Dv <= kMaxHeadDim.
constexpr int64_t kMaxHeadDim = 128;
Status attentionForward(cudaStream_t s, FloatType t, void *out, float *lse,
                        const void *q, const void *k, const void *v,
                        const cpu::AttentionConfig &c);
size_t attentionBackwardWorkspaceBytes(const cpu::AttentionConfig &c);
/// dq, dk, dv overwritten; recomputes the probabilities (attention_grad
/// has no forward output), keeping two f32 values per query row.
Status attentionBackward(cudaStream_t s, FloatType t, void *dq, void *dk,
                         void *dv, const void *dout, const void *q,
                         const void *k, const void *v,
                         const cpu::AttentionConfig &c, void *workspace);

/// The same attention on tensor cores (AttentionGemm.cu): cuBLASLt
/// strided-batched GEMMs for q k^T, P v (and the four backward products)
/// with the masked softmax and dropout in row kernels between them. Keeps
/// f32 scores for a chunk of heads in the workspace; heads are processed in
/// chunks that fit workspaceBytes (at least one head: see
/// attentionGemmWorkspaceBytes with the cap you can afford). Much faster
/// than the flash kernels above at long sequences (docs/cuda.md has the
/// timings); the executor picks per instruction.
size_t attentionGemmWorkspaceBytes(const cpu::AttentionConfig &c, FloatType t,
                                   bool backward, size_t cap);
Status attentionForwardGemm(const BlasHandles &h, cudaStream_t s, FloatType t,
                            void *out, const void *q, const void *k,
                            const void *v, const cpu::AttentionConfig &c,
                            void *workspace, size_t workspaceBytes);
Status attentionBackwardGemm(const BlasHandles &h, cudaStream_t s, FloatType t,
                             void *dq, void *dk, void *dv, const void *dout,
                             const void *q, const void *k, const void *v,
                             const cpu::AttentionConfig &c, void *workspace,
                             size_t workspaceBytes);

//===--- optimizer (Optimizer.cu) -----------------------------------------===//

/// One AdamW step at step t >= 1 (cpu::adamwUpdate). The clip factor comes
/// from the device scalar gradScale when not null, else cfg.gradScale.
Status adamw(cudaStream_t s, float *param, const float *grad, float *m,
             float *v, int64_t n, const cpu::AdamWConfig &cfg, int64_t t,
             const float *gradScale);
/// PyTorch SGD (runtime/exec/OptimizerKernels.cpp's sgd).
Status sgd(cudaStream_t s, float *param, const float *grad, float *buf,
           int64_t n, float lr, float momentum, float weightDecay,
           int64_t step, const float *gradScale);
size_t gradNormWorkspaceBytes(const int64_t *sizesHost, int count);
/// clip_grad_norm: the global L2 norm of `count` f32 tensors into *norm
/// and PyTorch's clip factor min(1, maxNorm / (norm + 1e-6)) into *scale
/// (1 when maxNorm <= 0). Squares summed in double, fixed order.
Status clipGradNorm(cudaStream_t s, const float *const *gradsHost,
                    const int64_t *sizesHost, int count, double maxNorm,
                    float *norm, float *scale, void *workspace);

} // namespace frenzy::cuda::kernels

#endif
