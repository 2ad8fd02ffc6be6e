//===- KernelContracts.h - what each kernel needs of its tensors -*- C++ -*-===//
//
// The kernels trust the shapes, dtypes and attributes of their instruction
// (they index buffers by them), so the plan validator checks every
// instruction against its kernel's contract before anything is allocated:
// operand and result counts, dtypes, shapes (results exactly what the
// kernel writes, operands what it reads) and attributes (present, of the
// kind the kernel reads, in range). One contract per op of Ops.def (its
// Contract column).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_KERNELCONTRACTS_H
#define FRENZY_RUNTIME_EXEC_KERNELCONTRACTS_H

#include "Ops.h"
#include "plan.pb.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace frenzy::rt {

using Shape = std::vector<int64_t>;

/// A broken contract: what is wrong, in words (the validator adds where).
struct ContractViolation : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One instruction and its tensors, with checks that throw
/// ContractViolation. Tensors are already known to exist, with valid
/// dtypes and shapes whose sizes do not overflow.
struct ContractCheck {
  const plan::Instr &instr;
  std::vector<const plan::Tensor *> in, out;

  [[noreturn]] void fail(const std::string &what) const;
  /// Operand count in [minIn, maxIn], result count nOut.
  void arity(size_t minIn, size_t maxIn, size_t nOut) const;
  Shape shape(const plan::Tensor *t) const;
  int64_t numel(const plan::Tensor *t) const;
  int64_t rank(const plan::Tensor *t) const { return t->shape_size(); }
  void dtype(const plan::Tensor *t, plan::DType d) const;
  void shapeIs(const plan::Tensor *t, const Shape &s) const;
  void numelIs(const plan::Tensor *t, int64_t n) const;
  /// Attributes of the kind the kernel reads; required unless a default is
  /// given.
  int64_t i(const char *name) const;
  int64_t i(const char *name, int64_t dflt) const;
  double f(const char *name) const;
  double f(const char *name, double dflt) const;
  std::vector<int64_t> ints(const char *name) const;
  void stringAttr(const char *name) const; // optional, a string when given
  /// "operand 1 f32[2,3]" / "result 0 ...", for messages.
  std::string name(const plan::Tensor *t) const;
};

using ContractFn = void (*)(ContractCheck &);
using ContractTable = OpTable<ContractFn>;
/// The contract of every op of Ops.def.
const ContractTable &kernelContracts();

/// numpy broadcasting of two shapes; false when they do not broadcast.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out);
std::string describeShape(const plan::Tensor &t);
std::string shapeText(const Shape &s); // "[2,3]"

} // namespace frenzy::rt

#endif
