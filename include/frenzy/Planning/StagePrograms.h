//===- StagePrograms.h - the partition written into plan.bin ----*- C++ -*-===//
#ifndef FRENZY_PLANNING_STAGEPROGRAMS_H
#define FRENZY_PLANNING_STAGEPROGRAMS_H

#include "frenzy/Planning/Partitioner.h"

namespace frenzy {
namespace plan {
class Plan;
}

/// Adds ranks, stages (instructions, boundary tensors, batch shares) and
/// predictions of a partition to a plan whose program is the training step
/// at the partition's micro-batch size.
void addStagePrograms(const PartitionPlan &pp, const ClusterSpec &cluster,
                      const PartitionOptions &o, plan::Plan &out);

} // namespace frenzy

#endif
