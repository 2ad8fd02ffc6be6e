//===- Workspace.h - scratch bytes of the CPU backend's kernels -*- C++ -*-===//
#ifndef FRENZY_LIB_ANALYSIS_MEMORY_WORKSPACE_H
#define FRENZY_LIB_ANALYSIS_MEMORY_WORKSPACE_H

#include "mlir/IR/Operation.h"

namespace frenzy {
/// Scratch bytes the CPU runtime's kernel for `op` uses while it runs.
int64_t cpuWorkspaceBytes(mlir::Operation *op);
} // namespace frenzy

#endif
