//===- PrecisionPlan.cpp - which float type each tensor and op uses -------===//
#include "PrecisionPlan.h"

#include "Tensor.h"

#include <algorithm>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

const char *frenzy::rt::cuda::storeName(FloatStore s) {
  return s == FloatStore::F32 ? "f32" : s == FloatStore::BF16 ? "bf16" : "f16";
}

const std::unordered_map<std::string, OpTyping> &
frenzy::rt::cuda::opTypings() {
  static const std::unordered_map<std::string, OpTyping> table = [] {
    using P = OpPrecision;
    std::unordered_map<std::string, OpTyping> t;
    for (const char *op :
         {"neg", "abs", "exp", "log", "sqrt", "reciprocal", "tanh", "erf",
          "sigmoid", "relu", "sin", "cos", "silu", "gelu", "activation_grad",
          "add", "sub", "mul", "div", "dropout", "matmul", "gemm", "softmax",
          "log_softmax", "softmax_grad", "swiglu"})
      t[op] = {P::Compute, {}, {}};
    // pow, max and min feed masks and norms; comparisons, logic, casts,
    // reductions and the optimizer stay f32.
    for (const char *op :
         {"pow", "max", "min", "equal", "less", "less_equal", "greater",
          "greater_equal", "and", "or", "not", "cast", "reduce_sum",
          "reduce_mean", "reduce_max", "reduce_min", "unbroadcast",
          "slice_grad", "gather_grad", "clip_grad_norm", "adamw_update",
          "sgd_update", "tp_all_reduce"})
      t[op] = {P::F32, {}, {}};
    for (const char *op : {"where", "trilu", "reshape", "squeeze", "unsqueeze",
                           "tp_copy", "transpose", "expand", "slice",
                           "concat", "split", "gather"})
      t[op] = {P::Move, {}, {}};
    t["layer_norm"] = {P::Compute, {1, 2}, {}};
    t["layer_norm_grad"] = {P::Compute, {2}, {1, 2}};
    t["rms_norm"] = {P::Compute, {1}, {}};
    t["rms_norm_grad"] = {P::Compute, {2}, {1}};
    // Operand 3 (4 in the backward) is the mask: bytes or an f32 bias.
    t["attention"] = {P::Compute, {3}, {}};
    t["attention_grad"] = {P::Compute, {4}, {}};
    t["softmax_cross_entropy_loss"] = {P::Compute, {}, {0}};
    t["cross_entropy_grad"] = {P::Compute, {0}, {}};
    return t;
  }();
  return table;
}

FloatStore PrecisionPlan::need(int instr, int index, bool out) const {
  const OpTyping &op = *typing[size_t(instr)];
  if (op.precision == OpPrecision::F32)
    return FloatStore::F32;
  const std::vector<int> &f32 = out ? op.f32Out : op.f32In;
  if (op.precision == OpPrecision::Compute &&
      std::find(f32.begin(), f32.end(), index) != f32.end())
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
  const auto &table = opTypings();
  size_t n = size_t(prog.tensors_size());
  p.storage.assign(n, FloatStore::F32);
  std::vector<bool> forced(n, false);
  for (const plan::Tensor &t : prog.tensors())
    if (t.id() >= 0 && size_t(t.id()) < n)
      forced[size_t(t.id())] = t.kind() != plan::ACTIVATION;
  for (const plan::Io &io : prog.outputs())
    forced[size_t(io.tensor())] = true;
  for (const plan::Instr &in : prog.instrs())
    if (in.op() == "adamw_update" || in.op() == "sgd_update" ||
        in.op() == "clip_grad_norm")
      for (int32_t id : in.inputs())
        forced[size_t(id)] = true;
  for (int i = 0; i < prog.instrs_size(); ++i) {
    const plan::Instr &in = prog.instrs(i);
    auto it = table.find(in.op());
    if (it == table.end())
      throw RuntimeError("instruction " + std::to_string(i) + " ('" +
                         printable(in.op()) + "', node '" +
                         printable(in.node()) +
                         "'): the CUDA backend has no kernel for it; use "
                         "--backend=cpu");
    const OpTyping &op = it->second;
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
