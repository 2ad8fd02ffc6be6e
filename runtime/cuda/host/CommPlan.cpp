//===- CommPlan.cpp - which ranks form which communicator -----------------===//
#include "CommPlan.h"

#include "Tensor.h"

#include <algorithm>
#include <map>
#include <set>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

std::string CommSpec::name() const {
  if (kind == P2P)
    return "P2P " + std::to_string(ranks[0]) + "->" + std::to_string(ranks[1]);
  std::string s = kind == TP ? "TP[" : kind == DP ? "DP[" : "TIED[";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? "," : "") + std::to_string(ranks[i]);
  return s + "]";
}

int CommSpec::indexOf(int32_t rank) const {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : int(it - ranks.begin());
}

namespace {

/// Decides NCCL or the MPI fallback for a set of ranks.
void chooseTransport(CommSpec &c, const std::vector<std::string> &gpuOf) {
  std::map<std::string, int32_t> seen;
  for (int32_t r : c.ranks) {
    const std::string &g = gpuOf[r];
    if (g.empty()) {
      c.transport = Transport::Mpi;
      c.why = "rank " + std::to_string(r) + " runs on the CPU backend";
      return;
    }
    auto [it, fresh] = seen.emplace(g, r);
    if (!fresh) {
      c.transport = Transport::Mpi;
      c.why = "ranks " + std::to_string(it->second) + " and " +
              std::to_string(r) + " share GPU " + g +
              " (NCCL needs one GPU per rank)";
      return;
    }
  }
  c.transport = Transport::Nccl;
}

} // namespace

std::vector<CommSpec>
frenzy::rt::cuda::planCommunicators(const plan::Plan &plan,
                                    const std::vector<std::string> &gpuOf) {
  int32_t world = plan.ranks_size();
  if (int32_t(gpuOf.size()) != world)
    throw RuntimeError("communicators: " + std::to_string(gpuOf.size()) +
                       " GPU ids for a plan of " + std::to_string(world) +
                       " ranks");
  auto checkRank = [&](int32_t r, const std::string &where) {
    if (r < 0 || r >= world)
      throw RuntimeError("plan: " + where + " names rank " +
                         std::to_string(r) + " of a plan of " +
                         std::to_string(world) +
                         " ranks; re-emit the plan with frenzy-opt");
  };
  std::vector<CommSpec> out;
  for (int gi = 0; gi < plan.groups_size(); ++gi) {
    const plan::CommGroup &g = plan.groups(gi);
    CommSpec c;
    c.kind = g.kind() == plan::CommGroup::TP   ? CommSpec::TP
             : g.kind() == plan::CommGroup::DP ? CommSpec::DP
                                               : CommSpec::TIED;
    c.group = gi;
    std::set<int32_t> seen;
    std::string where = "group " + std::to_string(gi);
    for (int32_t r : g.ranks()) {
      checkRank(r, where);
      if (!seen.insert(r).second)
        throw RuntimeError("plan: " + where + " lists rank " +
                           std::to_string(r) +
                           " twice; re-emit the plan with frenzy-opt");
      c.ranks.push_back(r);
    }
    if (c.ranks.size() < 2)
      continue; // a group of one needs no communication
    chooseTransport(c, gpuOf);
    out.push_back(std::move(c));
  }
  std::set<std::pair<int32_t, int32_t>> edges;
  for (const plan::Rank &r : plan.ranks())
    for (const plan::Action &a : r.stream())
      if (a.kind() == plan::Action::SEND) {
        std::string where = "rank " + std::to_string(r.id()) + "'s SEND";
        checkRank(a.peer(), where);
        if (a.peer() == r.id())
          throw RuntimeError("plan: " + where + " of tensor " +
                             std::to_string(a.tensor()) +
                             " goes to itself; re-emit the plan with "
                             "frenzy-opt");
        edges.insert({r.id(), a.peer()});
      }
  for (auto [from, to] : edges) {
    CommSpec c;
    c.kind = CommSpec::P2P;
    c.ranks = {from, to};
    chooseTransport(c, gpuOf);
    out.push_back(std::move(c));
  }
  return out;
}
