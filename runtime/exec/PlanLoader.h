//===- PlanLoader.h - read, check and validate plan.bin ---------*- C++ -*-===//
//
// The one way the runtime gets a plan: the file's framing and checksum
// (plan/PlanFile.h) are checked before the protobuf is parsed, and the
// parsed plan is validated (PlanValidator.h) before anything is allocated.
// Every refusal is one RuntimeError line naming the file.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_PLANLOADER_H
#define FRENZY_RUNTIME_EXEC_PLANLOADER_H

#include "Tensor.h"

#include <string>

namespace frenzy::rt {

/// Reads and checks the plan file at `path`.
plan::Plan loadPlanFile(const std::string &path);
/// The same for plan.bin's bytes already in memory (`name` for messages).
plan::Plan loadPlanBytes(const std::string &bytes, const std::string &name);

} // namespace frenzy::rt

#endif
