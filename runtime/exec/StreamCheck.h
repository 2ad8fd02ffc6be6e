//===- StreamCheck.h - ranks, stages, groups and streams agree --*- C++ -*-===//
//
// The multi-rank half of the plan validator: every rank, stage and group
// index in range, each rank in one stage, each TP stage with its TP group,
// DP pieces the same size on every member, every SEND with the RECV of the
// same size on its peer, and the streams free of deadlock (a simulation of
// the ranks: sends never block, a receive waits for its send, collectives
// wait for every member).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_STREAMCHECK_H
#define FRENZY_RUNTIME_EXEC_STREAMCHECK_H

#include "plan.pb.h"

#include <string>
#include <vector>

namespace frenzy::rt {

/// One line per violation; assumes every program's tensors were checked.
std::vector<std::string> streamViolations(const plan::Plan &p);

} // namespace frenzy::rt

#endif
