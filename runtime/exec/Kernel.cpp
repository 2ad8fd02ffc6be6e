//===- Kernel.cpp - kernel arguments and the kernel table -----------------===//
#include "Kernel.h"

namespace frenzy::rt {

uint64_t StepContext::streamSeed(int64_t opSeed) const {
  uint64_t x = runSeed * 0x9E3779B97F4A7C15ull;
  x ^= uint64_t(step) * 0xBF58476D1CE4E5B9ull;
  x ^= uint64_t(opSeed) * 0x94D049BB133111EBull;
  return x;
}

static const plan::Attr *find(const plan::Instr &in, const char *name) {
  auto it = in.attrs().find(name);
  return it == in.attrs().end() ? nullptr : &it->second;
}

bool KernelArgs::has(const char *name) const { return find(instr, name); }

int64_t KernelArgs::i(const char *name) const {
  const plan::Attr *a = find(instr, name);
  if (!a)
    fail(std::string("missing attribute '") + name + "'");
  return a->i();
}
int64_t KernelArgs::i(const char *name, int64_t dflt) const {
  const plan::Attr *a = find(instr, name);
  return a ? a->i() : dflt;
}
double KernelArgs::f(const char *name) const {
  const plan::Attr *a = find(instr, name);
  if (!a)
    fail(std::string("missing attribute '") + name + "'");
  return a->f();
}
double KernelArgs::f(const char *name, double dflt) const {
  const plan::Attr *a = find(instr, name);
  return a ? a->f() : dflt;
}
std::string KernelArgs::s(const char *name) const {
  const plan::Attr *a = find(instr, name);
  return a ? a->s() : std::string();
}
std::vector<int64_t> KernelArgs::ints(const char *name) const {
  const plan::Attr *a = find(instr, name);
  if (!a)
    fail(std::string("missing attribute '") + name + "'");
  return {a->ints().values().begin(), a->ints().values().end()};
}

void KernelArgs::fail(const std::string &what) const {
  std::string where = "kernel '" + instr.op() + "'";
  if (!instr.node().empty())
    where += " (node '" + instr.node() + "')";
  throw RuntimeError(where + ": " + what);
}

cpu::DType KernelArgs::elementType(plan::DType t, const char *backend,
                                   const char *what) const {
  switch (t) {
  case plan::F32:
    return cpu::DType::F32;
  case plan::I64:
    return cpu::DType::I64;
  case plan::I32:
    return cpu::DType::I32;
  case plan::BOOL:
    return cpu::DType::Bool;
  default:
    fail(std::string("the ") + backend + " backend has no " + dtypeName(t) +
         " " + what);
  }
}

const KernelTable &kernelTable() {
  static const KernelTable table = [] {
    KernelTable t;
    // One call per group macro of Ops.def; OpsTest checks none is missed.
    registerElementwiseKernels(t);
    registerNNKernels(t);
    registerMovementKernels(t);
    registerOptimizerKernels(t);
    registerParallelKernels(t);
    return t;
  }();
  return table;
}

} // namespace frenzy::rt
