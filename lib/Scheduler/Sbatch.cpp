//===- Sbatch.cpp - Slurm batch scripts for placed jobs -------------------===//
#include "frenzy/Scheduler/Sbatch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
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

std::vector<std::vector<int>>
frenzy::sched::sbatchComponents(const Placement &placement,
                                const SchedCluster &c,
                                const std::vector<std::string> &rankNodes) {
  // One component's --gres applies to each of its nodes. Nodes given the
  // same number of GPUs share one component even across GPU types (an
  // untyped --gres; --nodelist pins the types): srun of a heterogeneous
  // step under PMIx (Slurm 22.05) sometimes never returns after its tasks
  // ended (docs/multinode.md), so a hetjob is written only where the GPU
  // counts per node differ.
  bool sameCount = true;
  for (const NodeGrant &g : placement)
    sameCount &= g.count == placement.front().count;
  std::map<std::pair<int, int64_t>, std::vector<int>> byKey;
  for (const NodeGrant &g : placement)
    byKey[{sameCount ? 0 : c.nodes()[g.node].type, g.count}].push_back(g.node);
  std::vector<std::vector<int>> out;
  for (auto &kv : byKey)
    out.push_back(kv.second);
  if (rankNodes.empty())
    return out;
  auto first = [&](int node) {
    auto it =
        std::find(rankNodes.begin(), rankNodes.end(), c.nodes()[node].name);
    return size_t(it - rankNodes.begin());
  };
  for (std::vector<int> &nodes : out)
    std::stable_sort(nodes.begin(), nodes.end(),
                     [&](int a, int b) { return first(a) < first(b); });
  std::stable_sort(out.begin(), out.end(),
                   [&](const std::vector<int> &a, const std::vector<int> &b) {
                     return first(a[0]) < first(b[0]);
                   });
  return out;
}

std::string
frenzy::sched::planOrderProblem(const Placement &placement,
                                const SchedCluster &c,
                                const std::vector<std::string> &rankNodes) {
  auto comps = sbatchComponents(placement, c, rankNodes);
  if (comps.size() < 2 || rankNodes.empty())
    return "";
  std::map<int, int64_t> count;
  for (const NodeGrant &g : placement)
    count[g.node] = g.count;
  // srun's order in a het step: component by component, node by node.
  size_t r = 0;
  for (size_t k = 0; k < comps.size(); ++k)
    for (int n : comps[k])
      for (int64_t i = 0; i < count[n]; ++i, ++r)
        if (r >= rankNodes.size() || rankNodes[r] != c.nodes()[n].name)
          return "plan rank " + std::to_string(r) + " is on node '" +
                 (r < rankNodes.size() ? rankNodes[r] : std::string("?")) +
                 "' but srun would start it on node '" + c.nodes()[n].name +
                 "' (hetjob component " + std::to_string(k) +
                 "): the plan interleaves GPU types, which a heterogeneous "
                 "step cannot";
  return "";
}

void frenzy::sched::writeSbatchScript(const SbatchJob &job,
                                      const SchedCluster &c,
                                      llvm::raw_ostream &os) {
  std::vector<std::vector<int>> components =
      sbatchComponents(job.placement, c, job.rankNodes);
  std::map<int, int64_t> count;
  int64_t ranks = 0;
  for (const NodeGrant &g : job.placement) {
    count[g.node] = g.count;
    ranks += g.count;
  }
  bool arbitrary = components.size() == 1 && !job.hostfile.empty();
  os << "#!/bin/bash\n";
  os << "# Written by frenzy-sched for job '" << job.name << "': " << ranks
     << " ranks in " << components.size() << " component(s).\n";
  os << "# --time is 1.5x the predicted run time (" << slurmTime(job.predictedSeconds)
     << ") plus 10 minutes for start-up and checkpoints.\n";
  if (!job.note.empty())
    os << "# " << job.note << "\n";
  if (job.data.empty() && job.command.empty())
    os << "# no 'data:' was given for this job: a multi-rank plan needs "
          "--data=TOKENS.bin on the srun line\n";
  os << "#SBATCH --job-name=" << job.name << "\n";
  std::string time = slurmTime(job.predictedSeconds * 1.5 + 600);
  for (size_t k = 0; k < components.size(); ++k) {
    const std::vector<int> &nodes = components[k];
    // Options after `hetjob` belong to the next component only, so each
    // component states its own time limit.
    if (k)
      os << "#SBATCH hetjob\n";
    os << "#SBATCH --time=" << time << "\n";
    std::string list;
    for (int n : nodes)
      list += (list.empty() ? "" : ",") + c.nodes()[n].name;
    os << "#SBATCH --nodes=" << nodes.size() << "\n";
    os << "#SBATCH --nodelist=" << list << "\n";
    bool oneType = true;
    for (int n : nodes)
      oneType &= c.nodes()[n].type == c.nodes()[nodes[0]].type;
    os << "#SBATCH --gres=gpu:";
    if (oneType)
      os << gresTypeName(c.types()[c.nodes()[nodes[0]].type].gpu.name) << ":";
    os << count[nodes[0]] << "\n";
    os << "#SBATCH --ntasks-per-node=" << count[nodes[0]] << "\n";
  }
  os << "set -euo pipefail\n";
  if (job.command.empty()) {
    os << "mkdir -p " << quote(job.checkpointDir) << "\n";
    // Resume when a checkpoint exists (a requeued or preempted job).
    os << "resume=()\n";
    os << "if [ -e " << quote(job.checkpointDir + "/latest") << " ]; then "
       << "resume=(--resume=" << quote(job.checkpointDir) << "); fi\n";
  }
  if (arbitrary)
    os << "# Rank r on line r+1's node (--distribution=arbitrary): the "
          "plan's order.\n"
       << "export SLURM_HOSTFILE=" << quote(job.hostfile) << "\n";
  else if (components.size() > 1 && !job.rankNodes.empty())
    os << "# srun numbers a het step's tasks component by component: the "
          "components are in plan order.\n";
  // pmix: how Open MPI 4.1 meets its ranks under srun (Debian's Open MPI
  // has no Slurm PMI-2 client). kill-on-bad-exit: a rank that refuses to
  // run (not on its plan node) ends the step; the others would wait for it.
  os << "srun --mpi=pmix --kill-on-bad-exit=1";
  if (components.size() > 1) {
    os << " --het-group=";
    for (size_t i = 0; i < components.size(); ++i)
      os << (i ? "," : "") << i;
  }
  if (arbitrary)
    os << " --distribution=arbitrary --ntasks=" << ranks;
  if (!job.command.empty()) {
    for (const std::string &a : job.command)
      os << " " << quote(a);
    os << "\n";
    return;
  }
  os << " " << quote(job.launcher) << " " << quote(job.plan)
     << " --steps=" << job.steps;
  if (!job.data.empty())
    os << " --data=" << quote(job.data);
  os << " --checkpoint-dir=" << quote(job.checkpointDir)
     << " --checkpoint-every=100 \"${resume[@]}\"\n";
}
