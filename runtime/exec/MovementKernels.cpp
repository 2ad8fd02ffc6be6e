//===- MovementKernels.cpp - data-movement kernels ------------------------===//
#include "Kernel.h"
#include "TensorOps.h"

#include <cstring>

namespace frenzy::rt {
namespace {

int eb(const Tensor &t) { return elementBytes(t.dtype); }

void copy(KernelArgs &a) {
  std::memcpy(a.out[0]->data(), a.in[0]->data(), a.in[0]->bytes());
}

void transpose(KernelArgs &a) {
  cpu::transpose(a.out[0]->data(), a.in[0]->data(), a.in[0]->shape,
                 a.ints("perm"), eb(*a.in[0]));
}

void expand(KernelArgs &a) {
  cpu::expand(a.out[0]->data(), a.out[0]->shape, a.in[0]->data(),
              a.in[0]->shape, eb(*a.in[0]));
}

void slice(KernelArgs &a) {
  cpu::slice(a.out[0]->data(), a.in[0]->data(), a.in[0]->shape,
             a.ints("starts"), a.ints("limits"), a.ints("strides"),
             eb(*a.in[0]));
}

void sliceGrad(KernelArgs &a) {
  cpu::sliceGradF32(a.out[0]->f32(), a.out[0]->shape, a.in[0]->f32(),
                    a.ints("starts"), a.ints("limits"), a.ints("strides"));
}

void concat(KernelArgs &a) {
  std::vector<const void *> ins;
  std::vector<cpu::Shape> shapes;
  for (Tensor *t : a.in) {
    ins.push_back(t->data());
    shapes.push_back(t->shape);
  }
  cpu::concat(a.out[0]->data(), ins, shapes, a.i("axis"), eb(*a.out[0]));
}

void split(KernelArgs &a) {
  std::vector<void *> outs;
  std::vector<int64_t> sizes;
  int64_t axis = a.i("axis");
  for (Tensor *t : a.out) {
    outs.push_back(t->data());
    sizes.push_back(t->shape[axis]);
  }
  cpu::split(outs, a.in[0]->data(), a.in[0]->shape, axis, sizes, eb(*a.in[0]));
}

void gather(KernelArgs &a) {
  const Tensor &data = *a.in[0], &idx = *a.in[1];
  if (idx.dtype != plan::I64)
    a.fail("indices must be i64, got " + idx.describe());
  if (!cpu::gather(a.out[0]->data(), data.data(), data.shape, idx.i64(),
                   idx.numel(), a.i("axis"), eb(data))) {
    int64_t axis = a.i("axis"), n = data.shape[axis];
    for (int64_t i = 0; i < idx.numel(); ++i)
      if (idx.i64()[i] < -n || idx.i64()[i] >= n)
        a.fail("index " + std::to_string(idx.i64()[i]) + " is outside [0, " +
               std::to_string(n) + ") of " + data.describe() +
               (data.name.empty() ? "" : " '" + data.name + "'") +
               " (a token id beyond the vocabulary?)");
    a.fail("index out of range");
  }
}

void gatherGrad(KernelArgs &a) {
  // The indices are data: the same range check as the forward gather.
  int64_t n = a.out[0]->shape[a.i("axis")];
  for (int64_t i = 0; i < a.in[1]->numel(); ++i)
    if (a.in[1]->i64()[i] < -n || a.in[1]->i64()[i] >= n)
      a.fail("index " + std::to_string(a.in[1]->i64()[i]) +
             " is outside [0, " + std::to_string(n) + ")");
  cpu::gatherGradF32(a.out[0]->f32(), a.out[0]->shape, a.in[0]->f32(),
                     a.in[1]->i64(), a.in[1]->numel(), a.i("axis"));
}

} // namespace

void registerMovementKernels(KernelTable &t) {
#define FRENZY_MOVEMENT_OP(Id, Name, Where, Kernel, ...) t[OpId::Id] = Kernel;
#include "Ops.def"
}

} // namespace frenzy::rt
