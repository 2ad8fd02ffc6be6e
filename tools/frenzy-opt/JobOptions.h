//===- JobOptions.h - frenzy-opt --emit=job-options -------------*- C++ -*-===//
#ifndef FRENZY_TOOLS_FRENZY_OPT_JOBOPTIONS_H
#define FRENZY_TOOLS_FRENZY_OPT_JOBOPTIONS_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Planning/Partitioner.h"

#include "mlir/IR/BuiltinOps.h"

namespace frenzy {

/// Writes the scheduler's option table for the model (a training step
/// built at batch 1): for each GPU type of the cluster and each count in
/// {1, 2, 4, ...} and multiples of the node size, the partitioner's best
/// plan on that many GPUs of the type (memory-checked by the memory model);
/// and for each pair of types, mixes of up to 16 + 16 GPUs, which the
/// partitioner plans as one heterogeneous job. Returns the exit code.
int writeJobOptions(mlir::ModuleOp module, const ClusterSpec &cluster,
                    const PartitionOptions &po, llvm::StringRef input,
                    llvm::StringRef output);

} // namespace frenzy

#endif
