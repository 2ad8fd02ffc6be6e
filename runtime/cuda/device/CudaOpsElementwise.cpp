//===- CudaOpsElementwise.cpp - elementwise and movement ops on CUDA ------===//
//
// The adapters of runtime/exec/ElementwiseKernels.cpp and
// MovementKernels.cpp for the CUDA kernels; attribute decoding is the CPU
// adapters' (see CudaOps.h).
//
//===----------------------------------------------------------------------===//
#include "CudaOps.h"
#include "CudaOpsRegistry.h"
#include "NNArgs.h"

#include <cuda_runtime_api.h>

namespace frenzy::rt::cuda {
namespace {

using cpu::Shape;

int storageBytes(const DevOp &d, const Tensor &t) {
  return t.dtype == plan::F32 ? k::floatBytes(d.t) : elementBytes(t.dtype);
}

template <cpu::UnaryKind K> void unary(DevOp &d) {
  d.check(k::unary(d.s, K, d.t, d.out[0], d.in[0], d.inT(0).numel()));
}

void gelu(DevOp &d) {
  auto kind = d.args.s("approximate") == "tanh" ? cpu::UnaryKind::GeluTanh
                                                : cpu::UnaryKind::GeluErf;
  d.check(k::unary(d.s, kind, d.t, d.out[0], d.in[0], d.inT(0).numel()));
}

void activationGrad(DevOp &d) {
  std::string kind = d.args.s("kind");
  cpu::UnaryKind u = kind == "silu"        ? cpu::UnaryKind::Silu
                     : kind == "gelu_tanh" ? cpu::UnaryKind::GeluTanh
                                           : cpu::UnaryKind::GeluErf;
  d.check(k::unaryGrad(d.s, u, d.t, d.out[0], d.in[0], d.in[1],
                       d.inT(0).numel()));
}

template <cpu::BinaryKind K> void binary(DevOp &d) {
  const Tensor &o = d.outT(0), &l = d.inT(0), &r = d.inT(1);
  if (o.dtype == plan::F32 && l.dtype == plan::F32 && r.dtype == plan::F32)
    d.check(k::binary(d.s, K, d.t, d.out[0], o.shape, d.in[0], l.shape,
                      d.in[1], r.shape));
  else if (o.dtype == plan::I64 && l.dtype == plan::I64 &&
           r.dtype == plan::I64)
    d.check(k::binaryI64(d.s, K, static_cast<int64_t *>(d.out[0]), o.shape,
                         static_cast<const int64_t *>(d.in[0]), l.shape,
                         static_cast<const int64_t *>(d.in[1]), r.shape));
  else
    d.args.fail("the CUDA backend computes this op on f32 or on i64 operands "
                "only, got " + l.describe() + " and " + r.describe() +
                "; use --backend=cpu");
}

template <cpu::CompareKind K> void compare(DevOp &d) {
  const Tensor &l = d.inT(0), &r = d.inT(1);
  bool f32 = l.dtype == plan::F32;
  if (l.dtype != r.dtype || (!f32 && l.dtype != plan::I64))
    d.args.fail("the CUDA backend compares f32 or i64 operands of one type "
                "only, got " + l.describe() + " and " + r.describe() +
                "; use --backend=cpu");
  d.check(k::compare(d.s, K, f32, static_cast<uint8_t *>(d.out[0]),
                     d.outT(0).shape, d.in[0], l.shape, d.in[1], r.shape));
}

template <cpu::LogicKind K> void logic(DevOp &d) {
  d.check(k::logic(d.s, K, static_cast<uint8_t *>(d.out[0]), d.outT(0).shape,
                   static_cast<const uint8_t *>(d.in[0]), d.inT(0).shape,
                   static_cast<const uint8_t *>(d.in[1]), d.inT(1).shape));
}

void logicalNot(DevOp &d) {
  d.check(k::logicalNot(d.s, static_cast<uint8_t *>(d.out[0]),
                        static_cast<const uint8_t *>(d.in[0]),
                        d.inT(0).numel()));
}

void where(DevOp &d) {
  d.check(k::where(d.s, d.out[0], d.outT(0).shape,
                   static_cast<const uint8_t *>(d.in[0]), d.inT(0).shape,
                   d.in[1], d.inT(1).shape, d.in[2], d.inT(2).shape,
                   storageBytes(d, d.outT(0))));
}

cpu::DType cpuType(const DevOp &d, plan::DType t) {
  return d.args.elementType(t, "CUDA", "casts");
}

void cast(DevOp &d) {
  d.check(k::cast(d.s, d.out[0], cpuType(d, d.outT(0).dtype), d.in[0],
                  cpuType(d, d.inT(0).dtype), d.inT(0).numel()));
}

void dropout(DevOp &d) {
  float ratio = float(d.args.f("ratio"));
  if (!d.args.i("training", 0))
    ratio = 0.0f;
  DropoutRuns r = dropoutRuns(d.args, d.inT(0));
  uint64_t seed = d.args.ctx.streamSeed(d.args.i("seed", 0));
  size_t bytes = size_t(r.length) * k::floatBytes(d.t);
  for (int64_t c = 0; c < r.runs; ++c)
    d.check(k::dropout(d.s, d.t, static_cast<char *>(d.out[0]) + c * bytes,
                       static_cast<const char *>(d.in[0]) + c * bytes,
                       r.length, ratio, seed, r.first + uint64_t(c * r.stride)));
}

void trilu(DevOp &d) {
  const Tensor &x = d.inT(0);
  int64_t r = int64_t(x.shape.size());
  int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
  if (rows * cols == 0)
    return;
  d.check(k::trilu(d.s, d.out[0], d.in[0], x.numel() / (rows * cols), rows,
                   cols, d.args.i("upper"), d.args.i("k"),
                   storageBytes(d, x)));
}

template <cpu::ReduceKind K> void reduce(DevOp &d) {
  d.check(k::reduce(d.s, K, d.outF(0), d.inF(0), d.inT(0).shape,
                    d.args.ints("axes")));
}

void unbroadcast(DevOp &d) {
  d.check(k::sumToShape(d.s, d.outF(0), d.outT(0).shape, d.inF(0),
                        d.inT(0).shape));
}

void copy(DevOp &d) {
  int64_t bytes = d.inT(0).numel() * storageBytes(d, d.inT(0));
  cudaError_t e = cudaMemcpyAsync(d.out[0], d.in[0], size_t(bytes),
                                  cudaMemcpyDeviceToDevice, d.s);
  if (e != cudaSuccess)
    d.check(k::Status::error(std::string("cudaMemcpyAsync: ") +
                             cudaGetErrorString(e)));
}

void transpose(DevOp &d) {
  d.check(k::transpose(d.s, d.out[0], d.in[0], d.inT(0).shape,
                       d.args.ints("perm"), storageBytes(d, d.inT(0))));
}

void expand(DevOp &d) {
  d.check(k::expand(d.s, d.out[0], d.outT(0).shape, d.in[0], d.inT(0).shape,
                    storageBytes(d, d.inT(0))));
}

void slice(DevOp &d) {
  d.check(k::slice(d.s, d.out[0], d.in[0], d.inT(0).shape,
                   d.args.ints("starts"), d.args.ints("limits"),
                   d.args.ints("strides"), storageBytes(d, d.inT(0))));
}

void sliceGrad(DevOp &d) {
  d.check(k::sliceGrad(d.s, d.outF(0), d.outT(0).shape, d.inF(0),
                       d.args.ints("starts"), d.args.ints("limits"),
                       d.args.ints("strides")));
}

void concat(DevOp &d) {
  std::vector<const void *> ins(d.in.begin(), d.in.end());
  std::vector<Shape> shapes;
  for (Tensor *t : d.args.in)
    shapes.push_back(t->shape);
  d.check(k::concat(d.s, d.out[0], ins, shapes, d.args.i("axis"),
                    storageBytes(d, d.outT(0))));
}

void split(DevOp &d) {
  int64_t axis = d.args.i("axis");
  std::vector<int64_t> sizes;
  for (Tensor *t : d.args.out)
    sizes.push_back(t->shape[axis]);
  d.check(k::split(d.s, d.out, d.in[0], d.inT(0).shape, axis, sizes,
                   storageBytes(d, d.inT(0))));
}

void gather(DevOp &d) {
  const Tensor &data = d.inT(0), &idx = d.inT(1);
  if (idx.dtype != plan::I64)
    d.args.fail("indices must be i64, got " + idx.describe());
  d.check(k::gather(d.s, d.out[0], d.in[0], data.shape,
                    static_cast<const int64_t *>(d.in[1]), idx.numel(),
                    d.args.i("axis"), storageBytes(d, data), d.badIndex));
}

void gatherGrad(DevOp &d) {
  d.check(k::gatherGrad(d.s, d.outF(0), d.outT(0).shape, d.inF(0),
                        static_cast<const int64_t *>(d.in[1]),
                        d.inT(1).numel(), d.args.i("axis")));
}

} // namespace

void addElementwiseOps(CudaOpTable &t) {
#define FRENZY_ELEMENTWISE_OP FRENZY_CUDA_FILL
#define FRENZY_MOVEMENT_OP FRENZY_CUDA_FILL
#include "Ops.def"
}

} // namespace frenzy::rt::cuda
