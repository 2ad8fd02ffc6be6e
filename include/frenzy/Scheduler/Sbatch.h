//===- Sbatch.h - Slurm batch scripts for placed jobs -----------*- C++ -*-===//
//
// One script per placed job: typed GPUs per node (--gres=gpu:TYPE:N),
// pinned to the nodes the scheduler chose (--nodelist), one MPI rank per
// GPU; a job spanning GPU types or differently filled nodes becomes a
// heterogeneous job, one component per (type, GPUs per node). The body runs
// frenzy-launch under srun over every component, resuming from the job's
// checkpoint directory so that a requeued job continues.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SCHEDULER_SBATCH_H
#define FRENZY_SCHEDULER_SBATCH_H

#include "frenzy/Scheduler/SchedCluster.h"

#include "llvm/Support/raw_ostream.h"

namespace frenzy::sched {

struct SbatchJob {
  std::string name;
  Placement placement;
  double predictedSeconds = 0; // run time; --time asks for 1.5x + 10 min
  int64_t steps = 0;
  std::string plan;            // plan.bin path for frenzy-launch
  std::string checkpointDir;
  std::string note; // a comment line, e.g. how to make a missing plan
};

/// "A100-80G" -> "a100_80g": Slurm gres type names are plain identifiers.
std::string gresTypeName(llvm::StringRef gpuType);

void writeSbatchScript(const SbatchJob &job, const SchedCluster &c,
                       llvm::raw_ostream &os);

} // namespace frenzy::sched

#endif
