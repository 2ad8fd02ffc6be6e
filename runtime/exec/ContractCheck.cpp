//===- ContractCheck.cpp - checks the kernel contracts are written in ----===//
#include "KernelContracts.h"

#include "Tensor.h"

#include <algorithm>

namespace frenzy::rt {

std::string describeShape(const plan::Tensor &t) {
  std::string s = dtypeName(t.dtype());
  s += "[";
  for (int i = 0; i < t.shape_size(); ++i)
    s += (i ? "," : "") + std::to_string(t.shape(i));
  return s + "]";
}

bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

void ContractCheck::fail(const std::string &what) const {
  throw ContractViolation(what);
}

std::string ContractCheck::name(const plan::Tensor *t) const {
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] == t)
      return "operand " + std::to_string(k) + " " + describeShape(*t);
  for (size_t k = 0; k < out.size(); ++k)
    if (out[k] == t)
      return "result " + std::to_string(k) + " " + describeShape(*t);
  return describeShape(*t);
}

void ContractCheck::arity(size_t minIn, size_t maxIn, size_t nOut) const {
  if (in.size() < minIn || in.size() > maxIn)
    fail("has " + std::to_string(in.size()) + " operands, the kernel takes " +
         (minIn == maxIn ? std::to_string(minIn)
                         : std::to_string(minIn) + " to " +
                               std::to_string(maxIn)));
  if (out.size() != nOut)
    fail("has " + std::to_string(out.size()) + " results, the kernel writes " +
         std::to_string(nOut));
}

Shape ContractCheck::shape(const plan::Tensor *t) const {
  return Shape(t->shape().begin(), t->shape().end());
}

int64_t ContractCheck::numel(const plan::Tensor *t) const {
  int64_t n = 1;
  for (int64_t d : t->shape())
    n *= d; // bounded: the validator checked every tensor's size first
  return n;
}

void ContractCheck::dtype(const plan::Tensor *t, plan::DType d) const {
  if (t->dtype() != d)
    fail(name(t) + " must be " + dtypeName(d));
}

std::string shapeText(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

void ContractCheck::shapeIs(const plan::Tensor *t, const Shape &s) const {
  if (shape(t) != s)
    fail(name(t) + " must have shape " + shapeText(s));
}

void ContractCheck::numelIs(const plan::Tensor *t, int64_t n) const {
  if (numel(t) != n)
    fail(name(t) + " must have " + std::to_string(n) + " elements");
}

static const plan::Attr *attr(const plan::Instr &in, const char *name) {
  auto it = in.attrs().find(name);
  return it == in.attrs().end() ? nullptr : &it->second;
}

int64_t ContractCheck::i(const char *n) const {
  const plan::Attr *a = attr(instr, n);
  if (!a || a->value_case() != plan::Attr::kI)
    fail(std::string("needs integer attribute '") + n + "'");
  return a->i();
}
int64_t ContractCheck::i(const char *n, int64_t dflt) const {
  return attr(instr, n) ? i(n) : dflt;
}
double ContractCheck::f(const char *n) const {
  const plan::Attr *a = attr(instr, n);
  if (!a || a->value_case() != plan::Attr::kF)
    fail(std::string("needs float attribute '") + n + "'");
  return a->f();
}
double ContractCheck::f(const char *n, double dflt) const {
  return attr(instr, n) ? f(n) : dflt;
}
std::vector<int64_t> ContractCheck::ints(const char *n) const {
  const plan::Attr *a = attr(instr, n);
  if (!a || a->value_case() != plan::Attr::kInts)
    fail(std::string("needs integer-list attribute '") + n + "'");
  return {a->ints().values().begin(), a->ints().values().end()};
}
void ContractCheck::stringAttr(const char *n) const {
  const plan::Attr *a = attr(instr, n);
  if (a && a->value_case() != plan::Attr::kS)
    fail(std::string("attribute '") + n + "' must be a string");
}

} // namespace frenzy::rt
