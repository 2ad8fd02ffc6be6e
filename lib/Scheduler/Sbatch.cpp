//===- Sbatch.cpp - Slurm batch scripts for placed jobs -------------------===//
#include "frenzy/Scheduler/Sbatch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>

using namespace frenzy;
using namespace frenzy::sched;

std::string frenzy::sched::gresTypeName(llvm::StringRef gpuType) {
  std::string s;
  for (char c : gpuType)
    s += llvm::isAlnum(c) ? char(llvm::toLower(c)) : '_';
  return s;
}

/// Slurm's --time: D-HH:MM:SS.
static std::string slurmTime(double seconds) {
  int64_t s = int64_t(std::ceil(seconds));
  return llvm::formatv("{0}-{1:d2}:{2:d2}:{3:d2}", s / 86400, s / 3600 % 24,
                       s / 60 % 60, s % 60);
}

/// Single-quoted for bash.
static std::string quote(llvm::StringRef s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void frenzy::sched::writeSbatchScript(const SbatchJob &job,
                                      const SchedCluster &c,
                                      llvm::raw_ostream &os) {
  // Components: nodes grouped by (GPU type, GPUs taken there), because one
  // component's --gres applies to each of its nodes.
  std::map<std::pair<int, int64_t>, std::vector<int>> components;
  int64_t ranks = 0;
  for (const NodeGrant &g : job.placement) {
    components[{c.nodes()[g.node].type, g.count}].push_back(g.node);
    ranks += g.count;
  }
  os << "#!/bin/bash\n";
  os << "# Written by frenzy-sched for job '" << job.name << "': " << ranks
     << " ranks in " << components.size() << " component(s).\n";
  os << "# --time is 1.5x the predicted run time (" << slurmTime(job.predictedSeconds)
     << ") plus 10 minutes for start-up and checkpoints.\n";
  if (!job.note.empty())
    os << "# " << job.note << "\n";
  os << "#SBATCH --job-name=" << job.name << "\n";
  std::string time = slurmTime(job.predictedSeconds * 1.5 + 600);
  bool first = true;
  for (const auto &[key, nodes] : components) {
    // Options after `hetjob` belong to the next component only, so each
    // component states its own time limit.
    if (!first)
      os << "#SBATCH hetjob\n";
    first = false;
    os << "#SBATCH --time=" << time << "\n";
    std::string list;
    for (int n : nodes)
      list += (list.empty() ? "" : ",") + c.nodes()[n].name;
    os << "#SBATCH --nodes=" << nodes.size() << "\n";
    os << "#SBATCH --nodelist=" << list << "\n";
    os << "#SBATCH --gres=gpu:" << gresTypeName(c.types()[key.first].gpu.name)
       << ":" << key.second << "\n";
    os << "#SBATCH --ntasks-per-node=" << key.second << "\n";
  }
  std::string groups;
  for (size_t i = 0; i < components.size(); ++i)
    groups += (i ? "," : "") + std::to_string(i);
  os << "set -euo pipefail\n";
  os << "mkdir -p " << quote(job.checkpointDir) << "\n";
  // Resume when a checkpoint exists (a requeued or preempted job).
  os << "resume=()\n";
  os << "if [ -e " << quote(job.checkpointDir + "/latest") << " ]; then "
     << "resume=(--resume=" << quote(job.checkpointDir) << "); fi\n";
  os << "srun";
  if (components.size() > 1)
    os << " --het-group=" << groups;
  os << " frenzy-launch " << quote(job.plan) << " --steps=" << job.steps
     << " --checkpoint-dir=" << quote(job.checkpointDir)
     << " --checkpoint-every=100 \"${resume[@]}\"\n";
}
