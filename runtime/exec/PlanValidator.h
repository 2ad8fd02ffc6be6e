//===- PlanValidator.h - a plan checked before it runs ----------*- C++ -*-===//
//
// The runtime indexes buffers by what the plan says, so a plan is checked
// in full before anything is allocated: every index (tensor, parameter,
// program, instruction, rank, stage, group, peer) in range, every tensor's
// size overflow-checked, every instruction against its kernel's contract
// (KernelContracts.h), the optimizer's settings, and the ranks' streams
// against each other (each send has its receive of the same size, each
// collective's group holds its ranks, the streams cannot deadlock). No plan,
// however made, may make the runtime read or write out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_PLANVALIDATOR_H
#define FRENZY_RUNTIME_EXEC_PLANVALIDATOR_H

#include "Tensor.h"

#include <string>
#include <vector>

namespace frenzy::rt {

/// Largest tensor the runtime allocates (bytes): far above any CPU run, and
/// small enough that sizes computed from it cannot overflow int64.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;
constexpr int kMaxRank = 16;

/// Every violation, one line each ("program 0 instruction 12 (layer_norm):
/// ..."); empty for a valid plan. Stops after `limit` lines.
std::vector<std::string> planViolations(const plan::Plan &p,
                                        size_t limit = 100);
/// Throws a RuntimeError "<file>: <first violation> (and N more)".
void validatePlan(const plan::Plan &p, const std::string &file);

} // namespace frenzy::rt

#endif
