//===- TensorOps.h - generic tensor kernels of the CPU runtime --*- C++ -*-===//
//
// The shape-generic kernels the executor needs besides the fused ones in
// Kernels.h: numpy-broadcasting elementwise ops, reductions, data movement,
// softmax, RMS norm, dropout and broadcasting batched matmul. Contiguous
// row-major buffers; shapes are passed explicitly. Data-movement kernels are
// typed by element size in bytes so they serve float, int64 and bool alike.
// Bool tensors are one byte per element (0 or 1).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CPU_TENSOROPS_H
#define FRENZY_RUNTIME_CPU_TENSOROPS_H

#include <cstdint>
#include <vector>

namespace frenzy::cpu {

using Shape = std::vector<int64_t>;

/// Product of the dims (1 for a scalar).
int64_t numElements(const Shape &shape);

//===--- elementwise ------------------------------------------------------===//

enum class UnaryKind {
  Neg, Abs, Exp, Log, Sqrt, Reciprocal, Tanh, Erf, Sigmoid, Relu, Sin, Cos,
  Silu, GeluTanh, GeluErf
};
void unaryF32(UnaryKind kind, float *out, const float *in, int64_t n);
/// din = dout * f'(x) for Silu, GeluTanh, GeluErf (x is the forward input).
void unaryGradF32(UnaryKind kind, float *din, const float *dout,
                  const float *x, int64_t n);

enum class BinaryKind { Add, Sub, Mul, Div, Pow, Max, Min };
/// out[outShape] = a op b with numpy broadcasting of aShape and bShape
/// (right-aligned; each dim equal or 1). outShape is the broadcast shape.
void binaryF32(BinaryKind kind, float *out, const Shape &outShape,
               const float *a, const Shape &aShape, const float *b,
               const Shape &bShape);
void binaryI64(BinaryKind kind, int64_t *out, const Shape &outShape,
               const int64_t *a, const Shape &aShape, const int64_t *b,
               const Shape &bShape);

enum class CompareKind { Equal, Less, LessEqual, Greater, GreaterEqual };
/// Broadcasting comparison writing 0/1 bytes.
void compareF32(CompareKind kind, uint8_t *out, const Shape &outShape,
                const float *a, const Shape &aShape, const float *b,
                const Shape &bShape);
void compareI64(CompareKind kind, uint8_t *out, const Shape &outShape,
                const int64_t *a, const Shape &aShape, const int64_t *b,
                const Shape &bShape);

enum class LogicKind { And, Or };
void logicU8(LogicKind kind, uint8_t *out, const Shape &outShape,
             const uint8_t *a, const Shape &aShape, const uint8_t *b,
             const Shape &bShape);
void notU8(uint8_t *out, const uint8_t *in, int64_t n);

/// out = cond ? a : b, all three broadcasting to outShape; elements of
/// elemBytes bytes.
void where(void *out, const Shape &outShape, const uint8_t *cond,
           const Shape &condShape, const void *a, const Shape &aShape,
           const void *b, const Shape &bShape, int elemBytes);

enum class DType { F32, I64, I32, Bool };
/// Element conversion; float to int truncates toward zero, to bool is != 0.
void cast(void *out, DType outType, const void *in, DType inType, int64_t n);

/// Keep the lower (upper = false) or upper triangle of every trailing
/// [rows, cols] matrix, diagonal offset k (ONNX Trilu); zero the rest.
void trilu(void *out, const void *in, int64_t batch, int64_t rows,
           int64_t cols, bool upper, int64_t k, int elemBytes);

//===--- reductions -------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max, Min };
/// Reduce the given (sorted, distinct) axes of inShape; out holds the
/// product of the kept dims (keepdims does not change the data layout).
void reduceF32(ReduceKind kind, float *out, const float *in,
               const Shape &inShape, const std::vector<int64_t> &axes);
/// out = sum of `in` (inShape) over the dims that outShape broadcasts:
/// the adjoint of broadcasting outShape to inShape (ranks may differ,
/// right-aligned). Used for gradients of broadcasting ops.
void sumToShapeF32(float *out, const Shape &outShape, const float *in,
                   const Shape &inShape);

//===--- data movement ----------------------------------------------------===//

/// out = transpose(in, perm): out dim i is in dim perm[i].
void transpose(void *out, const void *in, const Shape &inShape,
               const std::vector<int64_t> &perm, int elemBytes);
/// Broadcast in (inShape, right-aligned) to outShape.
void expand(void *out, const Shape &outShape, const void *in,
            const Shape &inShape, int elemBytes);
/// out = in[starts : limits : strides] per dim; a negative stride walks
/// down from start to the (exclusive) limit, as ONNX Slice does.
void slice(void *out, const void *in, const Shape &inShape,
           const std::vector<int64_t> &starts,
           const std::vector<int64_t> &limits,
           const std::vector<int64_t> &strides, int elemBytes);
/// Adjoint of slice for float: din (inShape) = 0 except the sliced
/// positions, which receive dout.
void sliceGradF32(float *din, const Shape &inShape, const float *dout,
                  const std::vector<int64_t> &starts,
                  const std::vector<int64_t> &limits,
                  const std::vector<int64_t> &strides);
/// Concatenate along axis; inputs[i] has shape shapes[i].
void concat(void *out, const std::vector<const void *> &inputs,
            const std::vector<Shape> &shapes, int64_t axis, int elemBytes);
/// Split along axis into outputs with the given sizes along that axis.
void split(const std::vector<void *> &outputs, const void *in,
           const Shape &inShape, int64_t axis,
           const std::vector<int64_t> &sizes, int elemBytes);
/// ONNX Gather: out = take(data, indices, axis); negative indices count
/// from the end. Returns false on an index out of range.
bool gather(void *out, const void *data, const Shape &dataShape,
            const int64_t *indices, int64_t numIndices, int64_t axis,
            int elemBytes);
/// Adjoint of gather for float: ddata (dataShape) = 0, then scatter-add
/// dout at the gathered positions (repeated indices accumulate).
void gatherGradF32(float *ddata, const Shape &dataShape, const float *dout,
                   const int64_t *indices, int64_t numIndices, int64_t axis);

//===--- softmax, RMS norm ------------------------------------------------===//

/// Softmax (or log-softmax) over `axis` of shape.
void softmaxF32(float *out, const float *in, const Shape &shape, int64_t axis,
                bool log);
/// din from dout and the forward output y:
/// softmax: din = y * (dout - sum(dout * y)); log: din = dout - exp(y) * sum(dout).
void softmaxGradF32(float *din, const float *dout, const float *y,
                    const Shape &shape, int64_t axis, bool log);

/// out = x / sqrt(mean(x^2) + eps) * scale over N rows of C.
void rmsNormForward(float *out, const float *x, const float *scale, int64_t N,
                    int64_t C, float eps);
/// dx overwritten, dscale accumulated (+=).
void rmsNormBackward(float *dx, float *dscale, const float *dout,
                     const float *x, const float *scale, int64_t N, int64_t C,
                     float eps);

//===--- dropout ----------------------------------------------------------===//

/// Inverted dropout with a counter-based generator: element i is kept iff
/// uniform(seed, i) >= ratio, and kept values are scaled by 1/(1-ratio).
/// The same (seed, i) always gives the same decision, so the backward pass
/// regenerates the mask instead of storing it.
void dropoutF32(float *out, const float *in, int64_t n, float ratio,
                uint64_t seed, uint64_t first = 0);
/// Uniform [0,1) number for (seed, i); exposed for the attention kernel.
float dropoutUniform(uint64_t seed, uint64_t i);

//===--- matmul -----------------------------------------------------------===//

/// numpy matmul with broadcast batch dims: a [..., M, K], b [..., K, N]
/// (1-d operands promoted as numpy does), out [outShape].
void matmulF32(float *out, const Shape &outShape, const float *a,
               const Shape &aShape, const float *b, const Shape &bShape);

} // namespace frenzy::cpu

#endif
