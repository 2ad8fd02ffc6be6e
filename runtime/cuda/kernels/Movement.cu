//===- Movement.cu - transpose, expand, slice, concat, split, gather ------===//
//
// Transpose, expand and slice are one strided copy: output element i reads
// the input at base + sum(index_d * stride_d) (permuted, broadcast (0) or
// stepped strides), the CPU's stridedCopy. Concat and split move
// [outer, axis.., inner] runs with one 2-D memcpy per operand. Gather
// copies rows; its backward is the deterministic scatter-add.
//
//===----------------------------------------------------------------------===//
#include "ScatterAdd.cuh"

#include "Broadcast.h" // the CPU kernels' shape arithmetic, shared

#include <algorithm>

namespace frenzy::cuda::kernels {
namespace {

template <typename T>
__global__ void stridedCopyKernel(T *out, const T *in, int64_t n,
                                  BroadcastMap<1> m) {
  FRENZY_GRID_STRIDE(i, n) {
    int64_t off[1];
    m.offsets(i, off);
    out[i] = in[off[0]];
  }
}

/// out[shape] = in[base + index . strides], elements of elemBytes.
Status stridedCopy(cudaStream_t s, void *out, const void *in, int64_t base,
                   const Shape &shape, const std::vector<int64_t> &strides,
                   int elemBytes, const char *name) {
  const int64_t n = cpu::numElements(shape);
  if (n <= 0)
    return {};
  BroadcastMap<1> m;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    if (m.rank == kMaxRank)
      return rankTooHigh(name, shape.size());
    m.dims[m.rank] = shape[d];
    m.strides[0][m.rank] = strides[d];
    ++m.rank;
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    stridedCopyKernel<T><<<blocksFor(n), kThreads, 0, s>>>(
        static_cast<T *>(out), static_cast<const T *>(in) + base, n, m);
  };
  switch (elemBytes) {
  case 1: run(uint8_t{}); break;
  case 2: run(uint16_t{}); break;
  case 4: run(uint32_t{}); break;
  case 8: run(uint64_t{}); break;
  default:
    return Status::error(std::string(name) + ": elements of " +
                         std::to_string(elemBytes) + " bytes are not supported");
  }
  return launched(name);
}

void aroundAxis(const Shape &s, int64_t axis, int64_t &outer, int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
}

template <typename T>
__global__ void gatherKernel(T *out, const T *data, const int64_t *idx,
                             int64_t numIdx, int64_t outer, int64_t rows,
                             int64_t inner, int64_t *bad) {
  const int64_t total = outer * numIdx * inner;
  FRENZY_GRID_STRIDE(e, total) {
    const int64_t c = e % inner, j = (e / inner) % numIdx, o = e / (inner * numIdx);
    int64_t r = idx[j];
    if (r < -rows || r >= rows) {
      reportBad(bad, j);
      out[e] = T(0);
      continue;
    }
    r = r < 0 ? r + rows : r;
    out[e] = data[(o * rows + r) * inner + c];
  }
}

} // namespace

Status transpose(cudaStream_t s, void *out, const void *in,
                 const Shape &inShape, const std::vector<int64_t> &perm,
                 int elemBytes) {
  std::vector<int64_t> inStrides = cpu::detail::contiguousStrides(inShape);
  Shape outShape(perm.size());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    outShape[i] = inShape[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  return stridedCopy(s, out, in, 0, outShape, strides, elemBytes, "transpose");
}

Status expand(cudaStream_t s, void *out, const Shape &outShape,
              const void *in, const Shape &inShape, int elemBytes) {
  std::vector<int64_t> strides(outShape.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < inShape.size() && k < outShape.size(); ++k) {
    size_t d = inShape.size() - 1 - k, o = outShape.size() - 1 - k;
    strides[o] = inShape[d] == 1 ? 0 : stride;
    stride *= inShape[d];
  }
  return stridedCopy(s, out, in, 0, outShape, strides, elemBytes, "expand");
}

Status slice(cudaStream_t s, void *out, const void *in, const Shape &inShape,
             const std::vector<int64_t> &starts,
             const std::vector<int64_t> &limits,
             const std::vector<int64_t> &strides, int elemBytes) {
  Shape outShape;
  std::vector<int64_t> st;
  int64_t base = cpu::detail::sliceGeometry(inShape, starts, limits, strides,
                                            outShape, st);
  return stridedCopy(s, out, in, base, outShape, st, elemBytes, "slice");
}

namespace {
__global__ void sliceGradKernel(float *din, const float *dout, int64_t n,
                                int64_t base, BroadcastMap<1> m) {
  FRENZY_GRID_STRIDE(i, n) {
    int64_t off[1];
    m.offsets(i, off);
    din[base + off[0]] += dout[i]; // distinct positions: a slice is 1-1
  }
}
} // namespace

Status sliceGrad(cudaStream_t s, float *din, const Shape &inShape,
                 const float *dout, const std::vector<int64_t> &starts,
                 const std::vector<int64_t> &limits,
                 const std::vector<int64_t> &strides) {
  if (auto e = cudaMemsetAsync(din, 0, cpu::numElements(inShape) * 4, s))
    return cudaStatus("slice_grad", e);
  Shape outShape;
  std::vector<int64_t> st;
  int64_t base = cpu::detail::sliceGeometry(inShape, starts, limits, strides,
                                            outShape, st);
  const int64_t n = cpu::numElements(outShape);
  if (n <= 0)
    return {};
  BroadcastMap<1> m;
  for (size_t d = 0; d < outShape.size(); ++d) {
    if (outShape[d] == 1)
      continue;
    if (m.rank == kMaxRank)
      return rankTooHigh("slice_grad", outShape.size());
    m.dims[m.rank] = outShape[d];
    m.strides[0][m.rank++] = st[d];
  }
  sliceGradKernel<<<blocksFor(n), kThreads, 0, s>>>(din, dout, n, base, m);
  return launched("slice_grad");
}

Status concat(cudaStream_t s, void *out, const std::vector<const void *> &inputs,
              const std::vector<Shape> &shapes, int64_t axis, int elemBytes) {
  if (inputs.empty())
    return {};
  int64_t outer, inner, total = 0;
  aroundAxis(shapes[0], axis, outer, inner);
  for (const Shape &sh : shapes)
    total += sh[axis];
  int64_t offset = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const size_t run = size_t(shapes[k][axis] * inner * elemBytes);
    if (run > 0 && outer > 0)
      if (auto e = cudaMemcpy2DAsync(
              static_cast<char *>(out) + offset * inner * elemBytes,
              size_t(total * inner * elemBytes), inputs[k], run, run,
              size_t(outer), cudaMemcpyDeviceToDevice, s))
        return cudaStatus("concat", e);
    offset += shapes[k][axis];
  }
  return {};
}

Status split(cudaStream_t s, const std::vector<void *> &outputs,
             const void *in, const Shape &inShape, int64_t axis,
             const std::vector<int64_t> &sizes, int elemBytes) {
  int64_t outer, inner;
  aroundAxis(inShape, axis, outer, inner);
  int64_t offset = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const size_t run = size_t(sizes[k] * inner * elemBytes);
    if (run > 0 && outer > 0)
      if (auto e = cudaMemcpy2DAsync(
              outputs[k], run,
              static_cast<const char *>(in) + offset * inner * elemBytes,
              size_t(inShape[axis] * inner * elemBytes), run, size_t(outer),
              cudaMemcpyDeviceToDevice, s))
        return cudaStatus("split", e);
    offset += sizes[k];
  }
  return {};
}

Status gather(cudaStream_t s, void *out, const void *data,
              const Shape &dataShape, const int64_t *indices,
              int64_t numIndices, int64_t axis, int elemBytes,
              int64_t *badIndex) {
  int64_t outer, inner;
  aroundAxis(dataShape, axis, outer, inner);
  const int64_t rows = dataShape[axis], total = outer * numIndices * inner;
  if (total <= 0)
    return {};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    gatherKernel<T><<<blocksFor(total), kThreads, 0, s>>>(
        static_cast<T *>(out), static_cast<const T *>(data), indices,
        numIndices, outer, rows, inner, badIndex);
  };
  switch (elemBytes) {
  case 1: run(uint8_t{}); break;
  case 2: run(uint16_t{}); break;
  case 4: run(uint32_t{}); break;
  case 8: run(uint64_t{}); break;
  default: return Status::error("gather: unsupported element size");
  }
  return launched("gather");
}

Status gatherGrad(cudaStream_t s, float *ddata, const Shape &dataShape,
                  const float *dout, const int64_t *indices,
                  int64_t numIndices, int64_t axis) {
  int64_t outer, inner;
  aroundAxis(dataShape, axis, outer, inner);
  if (auto e = cudaMemsetAsync(ddata, 0, cpu::numElements(dataShape) * 4, s))
    return cudaStatus("gather_grad", e);
  return scatterAddRows<float>(s, ddata, dout, indices, numIndices, outer,
                               dataShape[axis], inner, "gather_grad");
}

} // namespace frenzy::cuda::kernels
