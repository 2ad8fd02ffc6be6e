//===- SchedCluster.cpp - GPU types, nodes and the free-GPU ledger --------===//
#include "frenzy/Scheduler/SchedCluster.h"

#include <algorithm>
#include <cassert>
#include <numeric>

using namespace frenzy;
using namespace frenzy::sched;

llvm::Expected<SchedCluster> SchedCluster::build(const ClusterSpec &spec) {
  SchedCluster c;
  c.clusterSpec = spec;
  for (const ClusterNode &n : spec.nodes) {
    const GpuType *g = spec.gpuType(n.gpu);
    if (!g)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "node '%s': unknown GPU type '%s'; known types: %s",
          n.name.c_str(), n.gpu.c_str(), gpuTypeNames().c_str());
    int t = c.typeIndex(g->name);
    if (t < 0) {
      t = int(c.typeList.size());
      c.typeList.push_back({*g, 0, 0, n.bandwidthGBs()});
      c.nodesOfType.emplace_back();
      c.typeFree.push_back(0);
    }
    SchedType &st = c.typeList[t];
    st.total += n.count;
    st.perNode = std::max(st.perNode, n.count);
    st.intraGBs = std::min(st.intraGBs, n.bandwidthGBs());
    c.nodesOfType[t].push_back(int(c.nodeList.size()));
    c.nodeList.push_back({n.name, t, n.count, n.count});
    c.typeFree[t] += n.count;
    c.total += n.count;
  }
  c.freeTotal = c.total;
  return c;
}

int SchedCluster::typeIndex(llvm::StringRef name) const {
  for (size_t i = 0; i < typeList.size(); ++i)
    if (name.equals_insensitive(typeList[i].gpu.name))
      return int(i);
  return -1;
}

double SchedCluster::interNodeGBs() const {
  return clusterSpec.network.bandwidthGbps / 8.0;
}

// Groups of `tp` GPUs must sit on one node. First-fit walks nodes in file
// order (the FIFO baseline's allocator); best-fit first tries the single node
// with the least room that still holds everything, then fills the fullest
// free nodes so that a job spans as few nodes as possible and small holes
// stay free for small jobs.
bool SchedCluster::place(const JobOption &o, Fit fit, Placement *out) const {
  for (const TypeCount &tc : o.gpus) {
    if (tc.type < 0 || tc.type >= int(typeList.size()) ||
        typeFree[tc.type] < tc.count)
      return false;
    int64_t group = std::max<int64_t>(1, tc.group);
    if (tc.count % group)
      return false;
    std::vector<int> order = nodesOfType[tc.type];
    if (fit == Fit::BestFit) {
      int best = -1;
      for (int n : order)
        if (nodeList[n].free >= tc.count &&
            (best < 0 || nodeList[n].free < nodeList[best].free))
          best = n;
      if (best >= 0) {
        if (out)
          out->push_back({best, tc.count});
        continue;
      }
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return nodeList[a].free > nodeList[b].free;
      });
    }
    int64_t need = tc.count;
    for (int n : order) {
      int64_t take = std::min(need, nodeList[n].free / group * group);
      if (take <= 0)
        continue;
      if (out)
        out->push_back({n, take});
      need -= take;
      if (!need)
        break;
    }
    if (need)
      return false;
  }
  return true;
}

bool SchedCluster::fits(const JobOption &o) const {
  for (const TypeCount &tc : o.gpus)
    if (tc.type < 0 || tc.type >= int(typeList.size()) ||
        typeFree[tc.type] < tc.count)
      return false; // the cheap test first: most misses end here
  return place(o, Fit::FirstFit, nullptr);
}

std::optional<Placement> SchedCluster::allocate(const JobOption &o, Fit fit) {
  Placement p;
  if (!place(o, fit, &p))
    return std::nullopt;
  for (const NodeGrant &g : p) {
    nodeList[g.node].free -= g.count;
    typeFree[nodeList[g.node].type] -= g.count;
    freeTotal -= g.count;
  }
  return p;
}

void SchedCluster::release(const Placement &p) {
  for (const NodeGrant &g : p) {
    SchedNode &n = nodeList[g.node];
    n.free += g.count;
    typeFree[n.type] += g.count;
    freeTotal += g.count;
    // A double release is a simulator bug, not bad input: an invariant.
    assert(n.free <= n.count && "a placement was released twice");
  }
}

bool SchedCluster::take(const Placement &p) {
  for (const NodeGrant &g : p)
    if (g.node < 0 || g.node >= int(nodeList.size()) ||
        nodeList[g.node].free < g.count)
      return false;
  for (const NodeGrant &g : p) {
    nodeList[g.node].free -= g.count;
    typeFree[nodeList[g.node].type] -= g.count;
    freeTotal -= g.count;
  }
  return true;
}
