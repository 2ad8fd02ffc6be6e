//===- LayoutSpec.h - a partition given by hand (--layout) ------*- C++ -*-===//
//
// `--layout=SPEC` pins the plan's shape instead of searching: pipelines
// separated by '/', each a ','-separated list of stages, each stage a layer
// count with an optional TP degree ("2x2": two layers over two GPUs), each
// pipeline optionally followed by "@M", its micro-batch count. Example:
// "1,1@3/2@1" is a two-stage pipeline with three micro-batches beside a
// one-stage pipeline with one. The embedding goes to each pipeline's first
// stage, the head to its last; devices are taken in cluster order, a stage
// within one node. With "@M" on every pipeline the micro-batch size is the
// global batch over the total count; without, it is 1 and the shares are
// water-filled as the search does.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_LAYOUTSPEC_H
#define FRENZY_PLANNING_LAYOUTSPEC_H

#include "frenzy/Planning/Partitioner.h"

namespace frenzy {

/// The unscored plan of a layout spec, or an error naming what is wrong.
llvm::Expected<PartitionPlan> parseLayout(llvm::StringRef spec,
                                          const ClusterSpec &cluster,
                                          int64_t numLayers,
                                          int64_t globalBatch);

/// The layout spec of a plan's shape (its layers, TP degrees and
/// micro-batch counts; parseLayout places the devices in cluster order,
/// which need not be the plan's).
std::string formatLayout(const PartitionPlan &plan);

/// The TP degrees a layout spec's stages name (the "x2" of "1x2"), > 1,
/// each once; a malformed stage is skipped (parseLayout reports it).
std::vector<int64_t> layoutTpDegrees(llvm::StringRef spec);

} // namespace frenzy

#endif
