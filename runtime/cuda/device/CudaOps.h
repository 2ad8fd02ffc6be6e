//===- CudaOps.h - plan instructions onto the CUDA kernels ------*- C++ -*-===//
//
// The CUDA twin of the CPU backend's kernel table (runtime/exec/*Kernels.
// cpp): one adapter per op name that reads the instruction's attributes
// exactly as the CPU adapter does (through the same KernelArgs) and calls
// runtime/cuda/kernels (CudaKernels.h) with device pointers.
//
// Precision: every op has a float type `t` (the plan's compute type for
// ops that run in bf16/fp16, the storage type of its data for ops that
// only move bytes, f32 otherwise) and lists the operands that are always
// f32 (weights of norms, statistics, losses, gradients of parameters). The
// executor casts operands whose storage differs before the call and
// results after it (CudaExecutor.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPS_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDAOPS_H

#include "CudaKernels.h"
#include "Kernel.h"

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace frenzy::rt::cuda {

namespace k = frenzy::cuda::kernels;

/// How an op's float operands are typed.
enum class OpPrecision {
  Compute, // the plan's compute type (bf16/fp16 in mixed precision)
  Move,    // the storage type of its first float operand (bytes moved)
  F32,     // always f32
};

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

struct CudaOp {
  void (*run)(DevOp &) = nullptr;
  OpPrecision precision = OpPrecision::F32;
  std::vector<int> f32In, f32Out; // always-f32 float operands (Compute ops)
};

/// Every op of the CPU kernel table that has a CUDA adapter.
const std::unordered_map<std::string, CudaOp> &cudaOps();

} // namespace frenzy::rt::cuda

#endif
