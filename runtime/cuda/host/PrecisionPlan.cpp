//===- PrecisionPlan.cpp - which float type each tensor and op uses -------===//
#include "PrecisionPlan.h"

#include "Tensor.h"
#include "plan/PlanPrograms.h"

#include <algorithm>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

const char *frenzy::rt::cuda::storeName(FloatStore s) {
  return s == FloatStore::F32 ? "f32" : s == FloatStore::BF16 ? "bf16" : "f16";
}

void frenzy::rt::cuda::requireCudaOps(const plan::Program &prog,
                                     const std::string &where) {
  for (int i = 0; i < prog.instrs_size(); ++i) {
    const plan::Instr &in = prog.instrs(i);
    std::optional<OpId> op = opId(in.op());
    if (!op || !opInfo(*op).onCuda())
      throw RuntimeError(where + "instruction " + std::to_string(i) + " ('" +
                         printable(in.op()) + "', node '" +
                         printable(in.node()) +
                         "'): the CUDA backend has no kernel for it; use "
                         "--backend=cpu");
  }
}

void frenzy::rt::cuda::requireCudaOps(const plan::Plan &plan) {
  for (int k = 0; const plan::Program *prog = plan::programAt(plan, k); ++k)
    requireCudaOps(*prog, plan.more_programs_size()
                              ? "program " + std::to_string(k) + " "
                              : std::string());
}

FloatStore PrecisionPlan::need(int instr, int index, bool out) const {
  const OpTyping &op = *typing[size_t(instr)];
  if (op.precision == OpPrecision::F32 || op.keepsF32(index, out))
    return FloatStore::F32;
  return opType[size_t(instr)];
}

int PrecisionPlan::castsPerStep(const plan::Program &prog) const {
  int n = 0;
  for (int i = 0; i < prog.instrs_size(); ++i) {
    const plan::Instr &in = prog.instrs(i);
    for (int j = 0; j < in.inputs_size(); ++j)
      n += prog.tensors(in.inputs(j)).dtype() == plan::F32 &&
           need(i, j, false) != storage[size_t(in.inputs(j))];
    for (int j = 0; j < in.outputs_size(); ++j)
      n += prog.tensors(in.outputs(j)).dtype() == plan::F32 &&
           need(i, j, true) != storage[size_t(in.outputs(j))];
  }
  return n;
}

PrecisionPlan frenzy::rt::cuda::planPrecision(const plan::Program &prog,
                                              const std::string &precision) {
  PrecisionPlan p;
  if (precision == "bf16-mixed")
    p.compute = FloatStore::BF16;
  else if (precision == "fp16-mixed") {
    p.compute = FloatStore::F16;
    p.lossScaling = true;
  } else if (!precision.empty() && precision != "fp32")
    throw RuntimeError("plan: precision '" + printable(precision) +
                       "' is not one the CUDA backend runs (fp32, "
                       "bf16-mixed, fp16-mixed)");
  requireCudaOps(prog);
  std::vector<OpId> ops;
  for (const plan::Instr &in : prog.instrs())
    ops.push_back(*opId(in.op()));
  size_t n = size_t(prog.tensors_size());
  p.storage.assign(n, FloatStore::F32);
  std::vector<bool> forced(n, false);
  for (const plan::Tensor &t : prog.tensors())
    if (t.id() >= 0 && size_t(t.id()) < n)
      forced[size_t(t.id())] = t.kind() != plan::ACTIVATION;
  for (const plan::Io &io : prog.outputs())
    forced[size_t(io.tensor())] = true;
  for (int i = 0; i < prog.instrs_size(); ++i)
    if (ops[size_t(i)] == OpId::AdamwUpdate ||
        ops[size_t(i)] == OpId::SgdUpdate ||
        ops[size_t(i)] == OpId::ClipGradNorm)
      for (int32_t id : prog.instrs(i).inputs())
        forced[size_t(id)] = true;
  for (int i = 0; i < prog.instrs_size(); ++i) {
    const plan::Instr &in = prog.instrs(i);
    const OpTyping &op = opTyping(ops[size_t(i)]);
    p.typing.push_back(&op);
    FloatStore t = FloatStore::F32;
    if (op.precision == OpPrecision::Compute)
      t = p.compute;
    else if (op.precision == OpPrecision::Move)
      for (int32_t id : in.inputs())
        if (prog.tensors(id).dtype() == plan::F32) {
          t = p.storage[size_t(id)];
          break;
        }
    p.opType.push_back(t);
    for (int j = 0; j < in.outputs_size(); ++j) {
      int32_t id = in.outputs(j);
      if (prog.tensors(id).dtype() == plan::F32)
        p.storage[size_t(id)] = forced[size_t(id)] ? FloatStore::F32
                                                   : p.need(i, j, true);
    }
  }
  return p;
}
