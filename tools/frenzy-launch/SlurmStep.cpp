//===- SlurmStep.cpp - checks of an srun step before its ranks meet -------===//
//
// srun starts every task with the step's node list and the task's node id
// in it. Slurm 22.05 builds a heterogeneous step's list in its own node
// order but numbers the nodes component by component: when the components
// are in another order, a task's node id names another node, the PMIx
// plugin serves each node under the other's name and MPI_Init never returns
// (seen on the emulated nodes: slurmstepd on n1 using n0's PMIx directory,
// "Cannot establish direct connection to n0 (0)"). Every rank compares the
// two before MPI_Init and refuses in one line instead. A rank that refuses
// under srun also cancels its job (cancelSlurmJob).
//
//===----------------------------------------------------------------------===//
#include "SlurmStep.h"

#include "Tensor.h"

#include <cstdlib>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

namespace frenzy::rt {

namespace {

/// "0-3,7" with zero padding ("01-03") kept.
std::vector<std::string> expandRanges(const std::string &ranges,
                                      const std::string &list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= ranges.size()) {
    size_t comma = ranges.find(',', at);
    std::string r = ranges.substr(
        at, comma == std::string::npos ? std::string::npos : comma - at);
    size_t dash = r.find('-');
    std::string lo = r.substr(0, dash);
    std::string hi = dash == std::string::npos ? lo : r.substr(dash + 1);
    if (lo.empty() || hi.empty() ||
        lo.find_first_not_of("0123456789") != std::string::npos ||
        hi.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(hi) < std::stoll(lo))
      throw RuntimeError("Slurm host list '" + list + "': bad range '" + r +
                         "'");
    for (long long i = std::stoll(lo); i <= std::stoll(hi); ++i) {
      std::string n = std::to_string(i);
      out.push_back(
          std::string(n.size() < lo.size() ? lo.size() - n.size() : 0, '0') +
          n);
    }
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return out;
}

/// One entry (no top-level comma): every bracket group expanded.
void expandEntry(const std::string &e, const std::string &list,
                 std::vector<std::string> &out) {
  size_t open = e.find('[');
  if (open == std::string::npos) {
    out.push_back(e);
    return;
  }
  size_t close = e.find(']', open);
  if (close == std::string::npos)
    throw RuntimeError("Slurm host list '" + list + "': unclosed '['");
  std::vector<std::string> rest;
  expandEntry(e.substr(close + 1), list, rest);
  for (const std::string &v :
       expandRanges(e.substr(open + 1, close - open - 1), list))
    for (const std::string &r : rest)
      out.push_back(e.substr(0, open) + v + r);
}

} // namespace

std::vector<std::string> expandSlurmHostlist(const std::string &list) {
  std::vector<std::string> out;
  std::string entry;
  int depth = 0;
  for (char c : list + ",") {
    if (c == ',' && depth == 0) {
      if (!entry.empty())
        expandEntry(entry, list, out);
      entry.clear();
      continue;
    }
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    entry += c;
  }
  if (depth != 0)
    throw RuntimeError("Slurm host list '" + list + "': unbalanced '['");
  return out;
}

void checkSlurmStep() {
  const char *step = std::getenv("SLURM_STEP_NODELIST");
  const char *id = std::getenv("SLURM_NODEID");
  const char *self = std::getenv("SLURMD_NODENAME");
  if (!step || !id || !self || !std::getenv("SLURM_STEP_ID"))
    return; // not a task of an srun step
  std::vector<std::string> nodes = expandSlurmHostlist(step);
  int nodeId = std::atoi(id);
  if (nodeId >= 0 && nodeId < int(nodes.size()) && nodes[nodeId] == self)
    return;
  std::string order;
  const char *het = std::getenv("SLURM_HET_SIZE");
  int groups = het ? std::atoi(het) : 0;
  for (int g = 0; g < groups; ++g)
    if (const char *l = std::getenv(
            ("SLURM_JOB_NODELIST_HET_GROUP_" + std::to_string(g)).c_str()))
      order += (order.empty() ? "" : ", ") + std::string(l);
  const char *rank = std::getenv("SLURM_PROCID");
  throw RuntimeError(
      "rank " + std::string(rank ? rank : "?") + " on Slurm node '" + self +
      "': srun gave it node id " + id + ", which is '" +
      (nodeId >= 0 && nodeId < int(nodes.size()) ? nodes[nodeId] : "?") +
      "' in the step's nodes " + step +
      (order.empty() ? std::string()
                     : "; the hetjob's components hold " + order +
                           ", not in Slurm's node order") +
      ": Slurm's PMIx plugin would hang in MPI_Init; write the components "
      "in Slurm's node order (sinfo -N), with the plan's ranks in that order");
}

void cancelSlurmJob() {
  const char *job = std::getenv("SLURM_JOB_ID");
  if (!job || !std::getenv("SLURM_STEP_ID"))
    return;
  // The step's other tasks, the batch script and a stuck srun all end; a
  // missing scancel leaves it to srun --kill-on-bad-exit.
  std::string id = job;
  char arg0[] = "scancel", quiet[] = "--quiet";
  char *argv[] = {arg0, quiet, id.data(), nullptr};
  pid_t pid;
  if (posix_spawnp(&pid, "scancel", nullptr, nullptr, argv, environ) == 0)
    waitpid(pid, nullptr, 0);
}

} // namespace frenzy::rt
