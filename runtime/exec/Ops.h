//===- Ops.h - the runtime's ops by id, from Ops.def -----------*- C++ -*-===//
//
// Plans name ops by string (plan.proto Instr.op, the wire format); the
// runtime maps each name to an OpId once, when it loads a plan, and every
// table after that (CPU kernels, contracts, CUDA typing and adapters) is an
// array indexed by OpId, filled from Ops.def.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_OPS_H
#define FRENZY_RUNTIME_EXEC_OPS_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace frenzy::rt {

enum class OpId : uint16_t {
#define FRENZY_OP(Id, ...) Id,
#include "Ops.def"
};

inline constexpr size_t kNumOps = 0
#define FRENZY_OP(...) +1
#include "Ops.def"
    ;

/// Which backends have a kernel for an op (Ops.def's Where column).
enum class Backends : uint8_t { Both, CpuOnly };

/// The float type the CUDA backend runs an op in (the CPU backend runs
/// everything in f32).
enum class OpPrecision : uint8_t {
  Compute, // the plan's compute type
  Move,    // the storage type of its first float operand (bytes moved)
  F32,     // always f32
};

/// Bit i set: operand (or result) i. Ops have far fewer than 32 of either.
constexpr uint32_t indexMask(std::initializer_list<int> indices) {
  uint32_t m = 0;
  for (int i : indices)
    m |= uint32_t(1) << i;
  return m;
}

struct OpTyping {
  OpPrecision precision;
  uint32_t f32In, f32Out; // Compute ops: operands / results always f32
  constexpr bool keepsF32(int index, bool out) const {
    return index >= 0 && index < 32 && ((out ? f32Out : f32In) >> index & 1);
  }
};

struct OpInfo {
  const char *name;
  Backends where;
  OpTyping typing;
  constexpr bool onCuda() const { return where == Backends::Both; }
};

#define FRENZY_OP_MASK(...) ::frenzy::rt::indexMask({__VA_ARGS__})
inline constexpr OpInfo kOps[] = {
#define FRENZY_OP(Id, Name, Where, Kernel, Contract, Prec, F32In, F32Out)      \
  {Name, Backends::Where,                                                      \
   {OpPrecision::Prec, FRENZY_OP_MASK F32In, FRENZY_OP_MASK F32Out}},
#include "Ops.def"
};
#undef FRENZY_OP_MASK
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps);

constexpr const OpInfo &opInfo(OpId id) { return kOps[size_t(id)]; }
constexpr const char *opName(OpId id) { return opInfo(id).name; }
/// The op a plan names; none for a name not in Ops.def.
std::optional<OpId> opId(std::string_view name);

/// A table by OpId: Fn for each op a backend has, null for the others.
template <typename Fn> struct OpTable {
  Fn fns[kNumOps] = {};
  Fn &operator[](OpId id) { return fns[size_t(id)]; }
  Fn operator[](OpId id) const { return fns[size_t(id)]; }
};

/// Every OpId, for walking the list (`for (OpId id : allOps())`).
struct AllOps {
  struct It {
    size_t i;
    OpId operator*() const { return OpId(i); }
    It &operator++() { return ++i, *this; }
    bool operator!=(It o) const { return i != o.i; }
  };
  It begin() const { return {0}; }
  It end() const { return {kNumOps}; }
};
constexpr AllOps allOps() { return {}; }

} // namespace frenzy::rt

#endif
