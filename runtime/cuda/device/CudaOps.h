//===- CudaOps.h - plan instructions onto the CUDA kernels ------*- C++ -*-===//
//
// The CUDA twin of the CPU backend's kernel table (runtime/exec/*Kernels.
// cpp): one adapter per op of Ops.def, under the CPU adapter's name, that
// reads the instruction's attributes exactly as the CPU adapter does
// (through the same KernelArgs) and calls runtime/cuda/kernels
// (CudaKernels.h) with device pointers.
//
// Precision: every op runs in the float type `t` that host/PrecisionPlan
// gives it; the executor has already cast each float operand to what the
// op takes (t, or f32 for the operands PrecisionPlan keeps in f32).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPS_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPS_H

#include "CudaKernels.h"
#include "Kernel.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace frenzy::rt::cuda {

namespace k = frenzy::cuda::kernels;

/// One instruction's call: attributes and host shapes through `args` (its
/// Tensors carry shape and dtype only), device pointers in `in` / `out`.
struct DevOp {
  KernelArgs &args;
  std::vector<void *> in, out;
  k::FloatType t = k::FloatType::F32;
  cudaStream_t s = nullptr;
  const k::BlasHandles *blas = nullptr;
  int64_t *badIndex = nullptr; // this instruction's slot (device)
  /// Device scratch for this call, freed after it.
  std::function<void *(size_t bytes)> workspace;
  /// tp_all_reduce: the in-place sum over the rank's TP group.
  std::function<void(float *, int64_t)> allReduce;
  /// The sequence-parallel ops' all-gather and reduce-scatter over the
  /// same group (StepContext::Chunks); null outside a TP group.
  StepContext::Chunks allGather, reduceScatter;
  /// Optimizer moments by parameter name: `count` zeroed device floats.
  std::function<float *(const std::string &name, int which, int64_t count)>
      moments;

  const Tensor &inT(size_t i) const { return *args.in[i]; }
  const Tensor &outT(size_t i) const { return *args.out[i]; }
  float *inF(size_t i) const { return static_cast<float *>(in[i]); }
  float *outF(size_t i) const { return static_cast<float *>(out[i]); }
  /// Throws a RuntimeError naming the instruction when `st` failed.
  void check(const k::Status &st) const;
};

using CudaOp = void (*)(DevOp &);

using CudaOpTable = OpTable<CudaOp>;
/// The adapter of every op Ops.def marks Both; null for CpuOnly ones.
const CudaOpTable &cudaOps();

} // namespace frenzy::rt::cuda

#endif
