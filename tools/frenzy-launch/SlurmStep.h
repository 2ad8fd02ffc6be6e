//===- SlurmStep.h - srun step checks before MPI_Init ----------*- C++ -*-===//
#ifndef FRENZY_TOOLS_LAUNCH_SLURMSTEP_H
#define FRENZY_TOOLS_LAUNCH_SLURMSTEP_H

#include <string>
#include <vector>

namespace frenzy::rt {

/// Slurm's compressed host list ("n[0-1],gpu[01-03]-a,x") as names, in
/// order; throws on a malformed list.
std::vector<std::string> expandSlurmHostlist(const std::string &list);

/// Under srun: throws unless the step's node list, at this task's node id,
/// names the node it runs on. A heterogeneous step whose components' nodes
/// are not in Slurm's own node order breaks that (Slurm 22.05), and its
/// PMIx plugin then hangs in MPI_Init: refused here, before it.
void checkSlurmStep();

/// Under srun: cancels this task's whole Slurm job (scancel), for a rank
/// that refuses to run there. srun --kill-on-bad-exit ends the step too, but
/// srun of a heterogeneous step under PMIx (Slurm 22.05) sometimes never
/// returns after its tasks failed (stuck joining its PMIx abort agent), and
/// the job would then sit until its --time. Does nothing outside srun.
void cancelSlurmJob();

} // namespace frenzy::rt

#endif
