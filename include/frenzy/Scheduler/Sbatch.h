//===- Sbatch.h - Slurm batch scripts for placed jobs -----------*- C++ -*-===//
//
// One script per placed job: typed GPUs per node (--gres=gpu:TYPE:N),
// pinned to the nodes the scheduler chose (--nodelist), one MPI rank per
// GPU; a job whose nodes hold different numbers of its GPUs becomes a
// heterogeneous job, one component per (type, GPUs per node); nodes of
// several types given the same number of GPUs stay one component (untyped
// --gres, the types pinned by --nodelist), because srun of a heterogeneous
// step under PMIx sometimes hangs after its tasks ended (Slurm 22.05,
// docs/multinode.md). The body runs
// frenzy-launch under srun over every component (Open MPI 4.1 under Slurm
// 22.05 needs --mpi=pmix: pmi2 is not built into Debian's Open MPI),
// resuming from the job's checkpoint directory so that a requeued job
// continues.
//
// Task order: MPI rank r is plan rank r, and frenzy-launch refuses a rank
// that is not on its plan node, so srun must place the tasks in the plan's
// order. With the plan's rank -> node list known: one component runs with
// --distribution=arbitrary over a hostfile of one node per rank (any order);
// a heterogeneous job's components are written in the order of their first
// plan rank, because srun numbers a het step's tasks component by
// component (docs/multinode.md, "Slurm").
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
  std::string launcher = "frenzy-launch"; // the runtime the script runs
  std::string data; // --data=TOKENS ("": a comment says to add it)
  /// Plan order: rank r's node name (empty when the plan is not known).
  std::vector<std::string> rankNodes;
  /// With rankNodes and one component: SLURM_HOSTFILE, one node per rank.
  std::string hostfile;
  /// When set, the tasks run exactly this command (frenzy-sched serve
  /// decides --resume itself) and the script neither makes checkpointDir
  /// nor looks for a checkpoint.
  std::vector<std::string> command;
};

/// The sbatch components of a placement, in the order they are written:
/// all nodes when each holds the same number of the job's GPUs, else nodes
/// grouped by (GPU type, GPUs taken there); ordered by their first
/// plan rank when `rankNodes` is given (else by type). Each entry lists its
/// nodes (cluster node indices) in plan order.
std::vector<std::vector<int>>
sbatchComponents(const Placement &placement, const SchedCluster &c,
                 const std::vector<std::string> &rankNodes);

/// Why srun cannot start a heterogeneous job's tasks in plan order (a
/// component's ranks not one run of consecutive ranks, node by node), or ""
/// when it can (or the job has one component: arbitrary distribution).
std::string planOrderProblem(const Placement &placement, const SchedCluster &c,
                             const std::vector<std::string> &rankNodes);

/// "A100-80G" -> "a100_80g": Slurm gres type names are plain identifiers.
std::string gresTypeName(llvm::StringRef gpuType);

void writeSbatchScript(const SbatchJob &job, const SchedCluster &c,
                       llvm::raw_ostream &os);

} // namespace frenzy::sched

#endif
