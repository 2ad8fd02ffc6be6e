//===- JobArtifacts.h - sbatch scripts and plans of placed jobs -*- C++ -*-===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_JOBARTIFACTS_H
#define FRENZY_TOOLS_FRENZY_SCHED_JOBARTIFACTS_H

#include "frenzy/Scheduler/Simulator.h"

namespace frenzy::sched {

struct ArtifactOptions {
  std::string dir;       // where scripts (and plans) go; must not hold them
  std::string frenzyOpt; // non-empty: write plan.bin of ONNX jobs with it
  std::string frenzyLaunch; // the runtime the scripts run ("": from PATH)
};

/// Per placed job: DIR/NAME.sbatch, and with frenzyOpt for ONNX jobs
/// DIR/NAME.cluster.yaml (the job's nodes), DIR/NAME.plan.bin and, for a
/// job of one sbatch component, DIR/NAME.hosts (its SLURM_HOSTFILE). Refuses
/// to overwrite an existing file. Returns 0 or prints one error and
/// returns 1.
int writeJobArtifacts(const SimResult &r, const std::vector<JobSpec> &jobs,
                      const SchedCluster &c, const ArtifactOptions &o);

/// BASE.cluster.yaml (the job's GPUs) and BASE.plan.bin from frenzy-opt run
/// as a process. Returns 0 or prints one error and returns 1.
int makeJobPlan(const JobSpec &spec, const Placement &p, const SchedCluster &c,
                const std::string &frenzyOpt, const std::string &base);

/// Plan rank r's node name, for every rank of a plan.bin.
llvm::Expected<std::vector<std::string>> planRankNodes(const std::string &plan);

} // namespace frenzy::sched

#endif
