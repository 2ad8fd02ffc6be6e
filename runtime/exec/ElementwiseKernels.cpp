//===- ElementwiseKernels.cpp - elementwise, reduction and mask kernels ---===//
//
// Thin adapters from plan instructions to the shape-generic kernels in
// runtime/cpu/TensorOps.h: they pick the typed variant and pass shapes.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "NNArgs.h"
#include "TensorOps.h"

namespace frenzy::rt {

DropoutRuns dropoutRuns(const KernelArgs &a, const Tensor &x) {
  DropoutRuns r;
  int64_t n = x.numel();
  std::vector<int64_t> split =
      a.has("tp_split") ? a.ints("tp_split") : std::vector<int64_t>{};
  if (split.empty()) {
    r.length = n;
    r.first = a.ctx.elementOffset(n);
    return r;
  }
  // [outer, blocks, part, inner] locally; [outer, blocks, parts, part,
  // inner] unsplit, this rank at index tpRank of parts.
  size_t dim = size_t(split[0]);
  int64_t parts = split[1], blocks = split[2];
  r.runs = dimProduct(x.shape, 0, dim) * blocks;
  r.length = n / r.runs;
  r.stride = parts * r.length;
  r.first = a.ctx.elementOffset(n * parts) + uint64_t(a.ctx.tpRank * r.length);
  return r;
}

namespace {

using cpu::Shape;

template <cpu::UnaryKind K> void unary(KernelArgs &a) {
  cpu::unaryF32(K, a.out[0]->f32(), a.in[0]->f32(), a.in[0]->numel());
}

void gelu(KernelArgs &a) {
  auto k = a.s("approximate") == "tanh" ? cpu::UnaryKind::GeluTanh
                                        : cpu::UnaryKind::GeluErf;
  cpu::unaryF32(k, a.out[0]->f32(), a.in[0]->f32(), a.in[0]->numel());
}

void activationGrad(KernelArgs &a) {
  std::string kind = a.s("kind");
  cpu::UnaryKind k = kind == "silu"        ? cpu::UnaryKind::Silu
                     : kind == "gelu_tanh" ? cpu::UnaryKind::GeluTanh
                                           : cpu::UnaryKind::GeluErf;
  cpu::unaryGradF32(k, a.out[0]->f32(), a.in[0]->f32(), a.in[1]->f32(),
                    a.in[0]->numel());
}

cpu::DType cpuType(const KernelArgs &a, plan::DType t) {
  return a.elementType(t, "CPU", "kernels");
}

/// The tensor's data as `type`: itself, or converted into `tmp`. Mixed-type
/// ops (pow with an integer exponent) and int32 arithmetic run through this.
template <typename T>
const T *as(const KernelArgs &a, const Tensor &t, plan::DType type,
            std::vector<uint64_t> &tmp) {
  if (t.dtype == type)
    return static_cast<const T *>(t.data());
  tmp.assign(t.numel(), 0);
  cpu::cast(tmp.data(), cpuType(a, type), t.data(), cpuType(a, t.dtype),
            t.numel());
  return reinterpret_cast<const T *>(tmp.data());
}

template <cpu::BinaryKind K> void binary(KernelArgs &a) {
  Tensor &o = *a.out[0], &l = *a.in[0], &r = *a.in[1];
  std::vector<uint64_t> tl, tr, to;
  if (o.dtype == plan::F32) {
    cpu::binaryF32(K, o.f32(), o.shape, as<float>(a, l, plan::F32, tl), l.shape,
                   as<float>(a, r, plan::F32, tr), r.shape);
  } else if (o.dtype == plan::I64 || o.dtype == plan::I32) {
    int64_t *out = o.dtype == plan::I64
                       ? o.i64()
                       : (to.assign(o.numel(), 0),
                          reinterpret_cast<int64_t *>(to.data()));
    cpu::binaryI64(K, out, o.shape, as<int64_t>(a, l, plan::I64, tl), l.shape,
                   as<int64_t>(a, r, plan::I64, tr), r.shape);
    if (o.dtype == plan::I32)
      cpu::cast(o.data(), cpu::DType::I32, out, cpu::DType::I64, o.numel());
  } else {
    a.fail(std::string("the CPU backend has no ") + dtypeName(o.dtype) +
           " kernels");
  }
}

template <cpu::CompareKind K> void compare(KernelArgs &a) {
  Tensor &o = *a.out[0], &l = *a.in[0], &r = *a.in[1];
  std::vector<uint64_t> tl, tr;
  if (l.dtype == plan::F32)
    cpu::compareF32(K, o.u8(), o.shape, l.f32(), l.shape, r.f32(), r.shape);
  else if (l.dtype == plan::I64 || l.dtype == plan::I32 ||
           l.dtype == plan::BOOL)
    cpu::compareI64(K, o.u8(), o.shape, as<int64_t>(a, l, plan::I64, tl),
                    l.shape, as<int64_t>(a, r, plan::I64, tr), r.shape);
  else
    a.fail(std::string("the CPU backend has no ") + dtypeName(l.dtype) +
           " kernels");
}

template <cpu::LogicKind K> void logic(KernelArgs &a) {
  Tensor &o = *a.out[0], &l = *a.in[0], &r = *a.in[1];
  cpu::logicU8(K, o.u8(), o.shape, l.u8(), l.shape, r.u8(), r.shape);
}

void logicalNot(KernelArgs &a) {
  cpu::notU8(a.out[0]->u8(), a.in[0]->u8(), a.in[0]->numel());
}

void where(KernelArgs &a) {
  Tensor &o = *a.out[0];
  cpu::where(o.data(), o.shape, a.in[0]->u8(), a.in[0]->shape, a.in[1]->data(),
             a.in[1]->shape, a.in[2]->data(), a.in[2]->shape,
             elementBytes(o.dtype));
}

void cast(KernelArgs &a) {
  cpu::cast(a.out[0]->data(), cpuType(a, a.out[0]->dtype), a.in[0]->data(),
            cpuType(a, a.in[0]->dtype), a.in[0]->numel());
}

void dropout(KernelArgs &a) {
  float ratio = float(a.f("ratio"));
  if (!a.i("training", 0))
    ratio = 0.0f;
  DropoutRuns r = dropoutRuns(a, *a.in[0]);
  uint64_t seed = a.ctx.streamSeed(a.i("seed", 0));
  for (int64_t c = 0; c < r.runs; ++c)
    cpu::dropoutF32(a.out[0]->f32() + c * r.length,
                    a.in[0]->f32() + c * r.length, r.length, ratio, seed,
                    r.first + uint64_t(c * r.stride));
}

void trilu(KernelArgs &a) {
  const Tensor &x = *a.in[0];
  int64_t r = x.shape.size();
  int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
  if (rows * cols == 0)
    return;
  cpu::trilu(a.out[0]->data(), x.data(), x.numel() / (rows * cols), rows, cols,
             a.i("upper"), a.i("k"), elementBytes(x.dtype));
}

template <cpu::ReduceKind K> void reduce(KernelArgs &a) {
  cpu::reduceF32(K, a.out[0]->f32(), a.in[0]->f32(), a.in[0]->shape,
                 a.ints("axes"));
}

void unbroadcast(KernelArgs &a) {
  cpu::sumToShapeF32(a.out[0]->f32(), a.out[0]->shape, a.in[0]->f32(),
                     a.in[0]->shape);
}

} // namespace

void registerElementwiseKernels(KernelTable &t) {
#define FRENZY_ELEMENTWISE_OP(Id, Name, Where, Kernel, ...) t[OpId::Id] = Kernel;
#include "Ops.def"
}

} // namespace frenzy::rt
