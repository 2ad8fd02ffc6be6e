//===- PlanPrograms.h - which program a stage runs --------------*- C++ -*-===//
//
// A plan holds one program per TP degree among its pipelines: the first
// pipeline's in Plan.program, the others in Plan.more_programs. Header-only,
// shared by the compiler (which writes stage indices) and the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PROTO_PLAN_PLANPROGRAMS_H
#define FRENZY_PROTO_PLAN_PLANPROGRAMS_H

#include "plan.pb.h"

#include <algorithm>

namespace frenzy::plan {

/// Program `index` (0: Plan.program, k: more_programs[k - 1]); null when
/// out of range.
inline const Program *programAt(const Plan &p, int32_t index) {
  if (index == 0)
    return &p.program();
  if (index < 0 || index > p.more_programs_size())
    return nullptr;
  return &p.more_programs(index - 1);
}

/// The TP degree a program is split for (1 when unsplit).
inline int64_t tpDegree(const Program &p) {
  return std::max<int64_t>(1, p.tp_degree());
}

} // namespace frenzy::plan

#endif
