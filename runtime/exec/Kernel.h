//===- Kernel.h - how the executor calls a kernel ---------------*- C++ -*-===//
//
// Every plan instruction names an op (Ops.def); its CPU kernel is a plain
// function that reads its tensors and attributes from KernelArgs. Each
// group file (<Group>Kernels.cpp) fills the table entries of its group of
// Ops.def, so every op in the list has a kernel or the build fails.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_KERNEL_H
#define FRENZY_RUNTIME_EXEC_KERNEL_H

#include "Ops.h"
#include "Tensor.h"
#include "TensorOps.h"

#include <functional>
#include <map>

namespace frenzy::rt {

/// Per-parameter optimizer state (moments), created on first update.
struct ParamState {
  std::vector<float> m, v;
};

/// What is shared by all instructions of one step.
struct StepContext {
  int64_t step = 1;         // 1-based
  uint64_t runSeed = 0;     // --seed
  double lr = 0;            // this step's learning rate
  const plan::Optimizer *optimizer = nullptr;
  std::map<std::string, ParamState> *state = nullptr;
  /// Workspace of the running kernel. A kernel asks once for all it needs;
  /// the bytes count toward the memory high-water mark for that
  /// instruction (the buffer itself is kept between kernels for speed).
  std::vector<float> scratch;
  int64_t workspaceBytes = 0;
  float *scratchFloats(int64_t n) {
    if (int64_t(scratch.size()) < n)
      scratch.resize(n);
    workspaceBytes = n * int64_t(sizeof(float));
    return scratch.data();
  }
  /// Seed of a random stream (dropout) for this step: distinct per op seed,
  /// step and run seed, identical between an op and its backward.
  uint64_t streamSeed(int64_t opSeed) const;
  /// Rows of the global batch before this micro-batch, and its size (0:
  /// the whole batch). Dropout streams are indexed over the whole batch, so
  /// a pipelined run draws what one rank does: a batch-major tensor of n
  /// elements starts at element sampleOffset * n / microBatch.
  int64_t sampleOffset = 0, microBatch = 0;
  /// Tensor parallelism: this rank's index in its TP group, and the sum over
  /// the group (null outside a TP group: tp_all_reduce is then the identity
  /// of a group of one).
  int64_t tpRank = 0;
  std::function<void(float *, int64_t)> tpAllReduce;
  /// Called after every kernel when set: the rank runner lets its
  /// transport move the data of sends still in flight (Open MPI sends a
  /// large message's data only inside an MPI call, so a message posted
  /// before a long forward would otherwise wait for the sender's next
  /// call: 12 ms instead of 0.6 over a 1 Gb/s link; docs/multinode.md).
  std::function<void()> betweenKernels;
  /// Sequence parallelism's collectives over the same group (null: a group
  /// of one): all-gather takes this rank's n floats to the group's n * T,
  /// chunks in rank order; reduce-scatter sums n * T floats over the group
  /// and keeps this rank's chunk of n.
  using Chunks = std::function<void(const float *, float *, int64_t)>;
  Chunks tpAllGather, tpReduceScatter;
  uint64_t elementOffset(int64_t n) const {
    return microBatch ? uint64_t(sampleOffset * (n / microBatch)) : 0;
  }
};

struct KernelArgs {
  const plan::Instr &instr;
  std::vector<Tensor *> in;
  std::vector<Tensor *> out;
  StepContext &ctx;

  bool has(const char *name) const;
  int64_t i(const char *name) const;
  int64_t i(const char *name, int64_t dflt) const;
  double f(const char *name) const;
  double f(const char *name, double dflt) const;
  std::string s(const char *name) const;
  std::vector<int64_t> ints(const char *name) const;
  /// Throws a RuntimeError naming the instruction.
  [[noreturn]] void fail(const std::string &what) const;
  /// `t` as runtime/cpu (and the CUDA kernels) name element types; for one
  /// they have none of (bf16, f16 plan tensors) fails with "the <backend>
  /// backend has no <dtype> <what>".
  cpu::DType elementType(plan::DType t, const char *backend,
                         const char *what) const;
};

using KernelFn = void (*)(KernelArgs &);
using KernelTable = OpTable<KernelFn>;

/// The CPU kernel of every op of Ops.def (built once).
const KernelTable &kernelTable();

/// PyTorch's clip_grad_norm_ factor for a global gradient norm.
double clipScale(double norm, double maxNorm);

void registerElementwiseKernels(KernelTable &t);
void registerNNKernels(KernelTable &t);
void registerMovementKernels(KernelTable &t);
void registerOptimizerKernels(KernelTable &t);
void registerParallelKernels(KernelTable &t);

} // namespace frenzy::rt

#endif
