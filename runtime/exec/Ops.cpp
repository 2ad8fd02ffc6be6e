//===- Ops.cpp - op names to OpIds, and what Ops.def must satisfy ---------===//
#include "Ops.h"

#include <unordered_map>

namespace frenzy::rt {
namespace {

constexpr bool sameName(const char *a, const char *b) {
  while (*a && *a == *b)
    ++a, ++b;
  return *a == *b;
}

// A name listed twice would make opId() pick one of two ops silently.
constexpr bool namesAreDistinct() {
  for (size_t i = 0; i < kNumOps; ++i)
    for (size_t j = i + 1; j < kNumOps; ++j)
      if (sameName(kOps[i].name, kOps[j].name))
        return false;
  return true;
}
static_assert(namesAreDistinct(), "Ops.def lists an op name twice");

// PrecisionPlan reads the f32 columns of Compute ops only: a list on
// another op would be a fact nobody acts on.
constexpr bool f32ListsOnComputeOpsOnly() {
  for (const OpInfo &op : kOps)
    if (op.typing.precision != OpPrecision::Compute &&
        (op.typing.f32In || op.typing.f32Out))
      return false;
  return true;
}
static_assert(f32ListsOnComputeOpsOnly(),
              "Ops.def: F32In/F32Out are for Compute ops only");

} // namespace

std::optional<OpId> opId(std::string_view name) {
  static const std::unordered_map<std::string_view, OpId> byName = [] {
    std::unordered_map<std::string_view, OpId> m;
    for (OpId id : allOps())
      m.emplace(opName(id), id);
    return m;
  }();
  auto it = byName.find(name);
  if (it == byName.end())
    return std::nullopt;
  return it->second;
}

} // namespace frenzy::rt
