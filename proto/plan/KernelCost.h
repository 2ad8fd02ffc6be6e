//===- KernelCost.h - the work of one plan kernel ---------------*- C++ -*-===//
//
// Flops and bytes of a plan instruction as the predicted timeline times it
// (lib/Planning/TimelineSimulation.cpp) and as frenzy-calibrate counts the
// kernels it measures, so a measured rate applies to the same count. The
// plan records the compiler's figures per instruction (Instr.flops, bytes);
// attention is counted here from its shapes for both directions (the
// backward recomputes the scores and does four more contractions).
// Header-only, shared by the compiler and the runtime's tools.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLAN_KERNELCOST_H
#define FRENZY_PLAN_KERNELCOST_H

#include "plan.pb.h"

namespace frenzy::plan {

inline double tensorBytes(const Tensor &t) {
  double n = 4; // the CPU backend's plans are fp32
  for (int64_t d : t.shape())
    n *= double(d);
  return n;
}

/// Bytes of the parameters the update instructions `instrs` of `prog`
/// update (their gradients' sizes): what a rank re-reads after other ranks
/// took its core (a cold turn scales with it).
template <class Range>
inline double updatedParameterBytes(const Program &prog, const Range &instrs) {
  double bytes = 0;
  for (int32_t i : instrs) {
    const Instr &in = prog.instrs(i);
    if ((in.op() == "adamw_update" || in.op() == "sgd_update") &&
        in.inputs_size() > 1)
      bytes += tensorBytes(prog.tensors(in.inputs(1)));
  }
  return bytes;
}

/// Flops of attention (q, k, v first) or its gradient (dy, q, k, v first).
inline double attentionFlops(const Program &prog, const Instr &in) {
  bool grad = in.op() == "attention_grad";
  int first = grad ? 1 : 0;
  if (in.inputs_size() < first + 3)
    return in.flops();
  const Tensor &q = prog.tensors(in.inputs(first));
  const Tensor &v = prog.tensors(in.inputs(first + 2));
  int r = q.shape_size();
  if (r < 2 || v.shape_size() < 2)
    return in.flops();
  double rows = 1;
  for (int i = 0; i < r - 1; ++i)
    rows *= double(q.shape(i));
  double d = double(q.shape(r - 1)), tk = double(v.shape(v.shape_size() - 2));
  double scores = rows * tk;
  double forward = 4 * scores * d + 6 * scores;
  return grad ? 2.5 * forward : forward;
}

/// Flops and bytes of an instruction (the plan's figures; attention's
/// flops from its shapes; bytes from the tensors when the plan has none).
inline std::pair<double, double> kernelWork(const Program &prog,
                                            const Instr &in) {
  double flops = in.op() == "attention" || in.op() == "attention_grad"
                     ? attentionFlops(prog, in)
                     : in.flops();
  double bytes = in.bytes();
  if (bytes == 0)
    for (auto *ids : {&in.inputs(), &in.outputs()})
      for (int32_t id : *ids)
        bytes += tensorBytes(prog.tensors(id));
  return {flops, bytes};
}

} // namespace frenzy::plan

#endif
