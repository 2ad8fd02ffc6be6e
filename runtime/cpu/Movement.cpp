//===- Movement.cpp - transpose, expand, slice, concat, split, gather -----===//
//
// Typed by element size so one implementation serves float, int64 and bool.
// Transpose, expand and slice are one strided copy: the input read through
// permuted, broadcast or stepped strides (Broadcast.h), whose unit-stride
// rows move with memcpy. Concat, split and gather move [axis.., inner] runs.
//
//===----------------------------------------------------------------------===//
#include "Broadcast.h"

#include <algorithm>
#include <cstring>

namespace frenzy::cpu {

namespace {
/// Splits a shape at `axis` into [outer, dim, inner] element counts.
void aroundAxis(const Shape &s, int64_t axis, int64_t &outer, int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
}
} // namespace

namespace detail {
void stridedCopy(void *dst, const void *src, const Shape &shape,
                 const std::vector<int64_t> &strides, int elemBytes) {
  std::vector<int64_t> s[1] = {strides};
  auto *o = static_cast<char *>(dst);
  auto *in = static_cast<const char *>(src);
  const int64_t eb = elemBytes;
  forEachRow(shape, s, [&](int64_t pos, const int64_t *off,
                           const int64_t *step, int64_t len) {
    char *d = o + pos * eb;
    const char *r = in + off[0] * eb;
    if (step[0] == 1) {
      std::memcpy(d, r, len * eb);
      return;
    }
    auto gatherRow = [&](auto tag) {
      using T = decltype(tag);
      T *y = reinterpret_cast<T *>(d);
      const T *x = reinterpret_cast<const T *>(r);
      if (step[0] == 0)
        std::fill(y, y + len, *x);
      else
        for (int64_t j = 0; j < len; ++j)
          y[j] = x[j * step[0]];
    };
    if (!withElementType(elemBytes, gatherRow))
      for (int64_t j = 0; j < len; ++j)
        std::memcpy(d + j * eb, r + j * step[0] * eb, eb);
  });
}
} // namespace detail

void transpose(void *out, const void *in, const Shape &inShape,
               const std::vector<int64_t> &perm, int elemBytes) {
  // Read the input through permuted strides; trailing dims left in place
  // coalesce into memcpy rows.
  std::vector<int64_t> inStrides = detail::contiguousStrides(inShape);
  Shape outShape(perm.size());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    outShape[i] = inShape[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  detail::stridedCopy(out, in, outShape, strides, elemBytes);
}

void expand(void *out, const Shape &outShape, const void *in,
            const Shape &inShape, int elemBytes) {
  detail::stridedCopy(out, in, outShape,
                      detail::broadcastStrides(inShape, outShape), elemBytes);
}

int64_t detail::sliceGeometry(const Shape &inShape,
                              const std::vector<int64_t> &starts,
                              const std::vector<int64_t> &limits,
                              const std::vector<int64_t> &steps,
                              Shape &outShape, std::vector<int64_t> &strides) {
  std::vector<int64_t> in = detail::contiguousStrides(inShape);
  int64_t base = 0;
  outShape.resize(inShape.size());
  strides.resize(inShape.size());
  for (size_t d = 0; d < inShape.size(); ++d) {
    // Negative steps walk backwards from start (exclusive limit below it).
    int64_t n = steps[d] > 0
                    ? (limits[d] - starts[d] + steps[d] - 1) / steps[d]
                    : (starts[d] - limits[d] - steps[d] - 1) / -steps[d];
    outShape[d] = std::max<int64_t>(0, n);
    strides[d] = in[d] * steps[d];
    base += starts[d] * in[d];
  }
  return base;
}

void slice(void *out, const void *in, const Shape &inShape,
           const std::vector<int64_t> &starts,
           const std::vector<int64_t> &limits,
           const std::vector<int64_t> &strides, int elemBytes) {
  Shape outShape;
  std::vector<int64_t> s;
  int64_t base =
      detail::sliceGeometry(inShape, starts, limits, strides, outShape, s);
  if (numElements(outShape) == 0)
    return;
  detail::stridedCopy(out, static_cast<const char *>(in) + base * elemBytes,
                      outShape, s, elemBytes);
}

void sliceGradF32(float *din, const Shape &inShape, const float *dout,
                  const std::vector<int64_t> &starts,
                  const std::vector<int64_t> &limits,
                  const std::vector<int64_t> &strides) {
  std::fill(din, din + numElements(inShape), 0.0f);
  Shape outShape;
  std::vector<int64_t> s[1];
  int64_t base =
      detail::sliceGeometry(inShape, starts, limits, strides, outShape, s[0]);
  detail::forEachBroadcast(outShape, s, [&](int64_t i, const int64_t *off) {
    din[base + off[0]] += dout[i];
  });
}

void concat(void *out, const std::vector<const void *> &inputs,
            const std::vector<Shape> &shapes, int64_t axis, int elemBytes) {
  int64_t outer, inner, total = 0;
  aroundAxis(shapes[0], axis, outer, inner);
  for (const Shape &s : shapes)
    total += s[axis];
  auto *o = static_cast<char *>(out);
  int64_t offset = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    int64_t run = shapes[k][axis] * inner * elemBytes;
    auto *src = static_cast<const char *>(inputs[k]);
    for (int64_t i = 0; i < outer && run > 0; ++i)
      std::memcpy(o + (i * total + offset) * inner * elemBytes, src + i * run,
                  run);
    offset += shapes[k][axis];
  }
}

void split(const std::vector<void *> &outputs, const void *in,
           const Shape &inShape, int64_t axis,
           const std::vector<int64_t> &sizes, int elemBytes) {
  int64_t outer, inner;
  aroundAxis(inShape, axis, outer, inner);
  auto *src = static_cast<const char *>(in);
  int64_t offset = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    int64_t run = sizes[k] * inner * elemBytes;
    auto *o = static_cast<char *>(outputs[k]);
    for (int64_t i = 0; i < outer && run > 0; ++i)
      std::memcpy(o + i * run,
                  src + (i * inShape[axis] + offset) * inner * elemBytes, run);
    offset += sizes[k];
  }
}

bool gather(void *out, const void *data, const Shape &dataShape,
            const int64_t *indices, int64_t numIndices, int64_t axis,
            int elemBytes) {
  int64_t outer, inner, n = dataShape[axis];
  aroundAxis(dataShape, axis, outer, inner);
  for (int64_t j = 0; j < numIndices; ++j)
    if (indices[j] < -n || indices[j] >= n)
      return false;
  auto *o = static_cast<char *>(out);
  auto *src = static_cast<const char *>(data);
  int64_t run = inner * elemBytes;
  for (int64_t i = 0; i < outer; ++i)
    for (int64_t j = 0; j < numIndices; ++j) {
      int64_t idx = indices[j] < 0 ? indices[j] + n : indices[j];
      std::memcpy(o + (i * numIndices + j) * run, src + (i * n + idx) * run,
                  run);
    }
  return true;
}

void gatherGradF32(float *ddata, const Shape &dataShape, const float *dout,
                   const int64_t *indices, int64_t numIndices, int64_t axis) {
  int64_t outer, inner, n = dataShape[axis];
  aroundAxis(dataShape, axis, outer, inner);
  std::fill(ddata, ddata + numElements(dataShape), 0.0f);
  for (int64_t i = 0; i < outer; ++i)
    for (int64_t j = 0; j < numIndices; ++j) {
      int64_t idx = indices[j] < 0 ? indices[j] + n : indices[j];
      float *dst = ddata + (i * n + idx) * inner;
      const float *src = dout + (i * numIndices + j) * inner;
      for (int64_t c = 0; c < inner; ++c)
        dst[c] += src[c];
    }
}

} // namespace frenzy::cpu
