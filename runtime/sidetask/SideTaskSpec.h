//===- SideTaskSpec.h - side tasks from their command-line specs -*- C++ -*-===//
//
// frenzy-launch --side-task=NAME=KIND[:key=value,...] binds a side task of
// the plan (by the name its side-task file gave it) or, for a plan without
// slots, adds one that runs in front of blocked receives. KIND is one of
//   pagerank  nodes, degree, rows (per step), tol, iters, seed
//   resize    images, size=HxW, to=HxW, rows (per step), seed
//   train     plan (a one-rank plan.bin), data (tokens), steps, seed, init,
//             instrs (instructions per step)
//   process   cmd (the rest of the spec: a shell command)
// and every kind takes priority=N, memory=BYTES (its budget) and
// fail-after=N (throw at its N-th step: the failure path, for tests).
// A malformed spec is one error line naming the spec, the key and what to
// write instead.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_SIDETASKSPEC_H
#define FRENZY_RUNTIME_SIDETASK_SIDETASKSPEC_H

#include "SideTaskHost.h"

#include <string>

namespace frenzy::rt {

struct SideTaskBinding {
  std::string name; // the plan's task name ("" for NAME-less specs)
  std::string spec; // KIND[:key=value,...]
};

/// "NAME=KIND:..." or "KIND:..." (name = kind).
SideTaskBinding parseSideTaskArg(const std::string &arg);
/// A task ready for the host (not yet initialised). Throws
/// std::invalid_argument with one line on a malformed spec.
SideTaskState makeSideTask(const std::string &spec);

} // namespace frenzy::rt

#endif
