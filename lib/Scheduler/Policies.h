//===- Policies.h - the scheduling policies (internal) ----------*- C++ -*-===//
#ifndef FRENZY_LIB_SCHEDULER_POLICIES_H
#define FRENZY_LIB_SCHEDULER_POLICIES_H

#include "frenzy/Scheduler/Simulator.h"

namespace frenzy::sched {

std::unique_ptr<Policy> makeFifoPolicy();
std::unique_ptr<Policy> makeGavelPolicy();
std::unique_ptr<Policy> makeSiaPolicy();
std::unique_ptr<Policy> makeFrenzyPolicy(bool realloc);

} // namespace frenzy::sched

#endif
