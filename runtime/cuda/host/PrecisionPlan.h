//===- PrecisionPlan.h - which float type each tensor and op uses -*- C++ -*-===//
//
// The mixed-precision policy of the CUDA backend as a pure function of the
// program and Plan.precision, so that it is tested without a GPU:
//  - fp32: everything f32;
//  - bf16-mixed / fp16-mixed: ops that compute (matmul, attention, norms,
//    elementwise) run in bf16/fp16 with f32 accumulation inside the
//    kernels; ops that only move bytes take the type of their data; the
//    rest (reductions, comparisons, optimizer) run in f32;
//  - some operands of a computing op are always f32 (norm weights, the
//    loss, the loss gradient seed, attention's additive mask);
//  - persistent tensors (parameters: the fp32 master weights; inputs,
//    constants, program outputs) and everything the optimizer reads
//    (gradients of parameters, the clip factor) are stored in f32.
// A float tensor is stored in the type its producer writes it in unless it
// must be f32; the executor casts an operand whose storage differs from
// what its op takes (castFloat), before the op for inputs, after it for
// results. Each op's class (compute, move, f32) and its always-f32
// operands are columns of runtime/exec/Ops.def.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_HOST_PRECISIONPLAN_H
#define FRENZY_RUNTIME_CUDA_HOST_PRECISIONPLAN_H

#include "Ops.h"
#include "plan.pb.h"

#include <string>
#include <vector>

namespace frenzy::rt::cuda {

/// Storage of a float tensor (values match kernels::FloatType).
enum class FloatStore : int { F32 = 0, BF16 = 1, F16 = 2 };
const char *storeName(FloatStore s);

/// Typing of every op, by OpId: Ops.def's Prec, F32In and F32Out columns.
inline const OpTyping &opTyping(OpId id) { return opInfo(id).typing; }

/// Throws RuntimeError naming the first instruction of `prog` whose op the
/// CUDA backend has no kernel for (not in Ops.def, or CpuOnly there), with
/// --backend=cpu as the way out. `where` prefixes the instruction
/// ("program 1 ", or empty).
void requireCudaOps(const plan::Program &prog, const std::string &where = "");
/// The same over every program of the plan, so that each rank refuses the
/// plan at load, before any communicator is made.
void requireCudaOps(const plan::Plan &plan);

struct PrecisionPlan {
  FloatStore compute = FloatStore::F32;
  bool lossScaling = false;            // fp16-mixed
  std::vector<FloatStore> storage;     // by tensor id (F32 if not float)
  std::vector<FloatStore> opType;      // by instruction
  std::vector<const OpTyping *> typing; // by instruction
  /// The type operand `index` (a result when `out`) of instruction
  /// `instr` must have when it is a float tensor.
  FloatStore need(int instr, int index, bool out) const;
  /// Float operands whose storage differs from what their op takes, over
  /// the whole program (what the casts cost).
  int castsPerStep(const plan::Program &prog) const;
};

/// Throws RuntimeError for an unknown precision or an op the CUDA backend
/// has no kernel for (requireCudaOps).
PrecisionPlan planPrecision(const plan::Program &prog,
                            const std::string &precision);

} // namespace frenzy::rt::cuda

#endif
