//===- NNArgs.h - what the CPU and CUDA NN adapters read alike --*- C++ -*-===//
//
// The CPU adapters (NNKernels.cpp) and the CUDA ones (CudaOpsNN.cpp) read
// norm and attention instructions alike and differ only in where the data
// lives (for attention's mask: host or device memory, expanded there); the
// decoding they share is here, defined in NNKernels.cpp (dropout's in
// ElementwiseKernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_NNARGS_H
#define FRENZY_RUNTIME_EXEC_NNARGS_H

#include "Kernel.h"
#include "Kernels.h"

#include <utility>

namespace frenzy::rt {

/// The number of elements of dims [from, to) of `shape`.
int64_t dimProduct(const std::vector<int64_t> &shape, size_t from, size_t to);

/// Rows and row width of a normalisation of `x` over dims [axis, rank).
std::pair<int64_t, int64_t> normRows(const KernelArgs &a, const Tensor &x);

/// Where dropout draws: local elements [c * length, (c + 1) * length) take
/// the decisions of the unsplit tensor's elements from first + c * stride,
/// for c < runs. Without `tp_split` one run of the whole tensor; with it
/// ([dim, parts, blocks], a TP rank's share), a run per (outer index,
/// block), so every rank drops what one rank would.
struct DropoutRuns {
  int64_t runs = 1, length = 0, stride = 0;
  uint64_t first = 0;
};
DropoutRuns dropoutRuns(const KernelArgs &a, const Tensor &x);

/// Geometry from q, k, v (operands first..first+2), the attributes, the
/// step's dropout stream and this rank's share of the heads; no mask.
cpu::AttentionConfig attentionGeometry(const KernelArgs &a, size_t first);

/// The optional mask (operand first+3), or null.
const Tensor *attentionMask(const KernelArgs &a, size_t first);

/// The shape a mask must be expanded to, one [Tq, Tk] matrix per head;
/// empty when the mask already is one matrix shared by all heads.
std::vector<int64_t> maskExpansion(const cpu::AttentionConfig &c,
                                   const Tensor &q, const Tensor &mask);

/// Points `c` at mask data (bool: masked out; f32: an additive bias) of
/// `heads` matrices (1 or c.BH).
void attachMask(cpu::AttentionConfig &c, plan::DType dtype, const void *data,
                int64_t heads);

} // namespace frenzy::rt

#endif
