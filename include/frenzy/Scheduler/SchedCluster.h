//===- SchedCluster.h - the cluster as the scheduler sees it ----*- C++ -*-===//
//
// The cluster file's nodes grouped by GPU type, and the free-GPU ledger the
// simulator allocates from. Allocation takes whole TP groups on one node
// (a stage's tensor-parallel group never spans nodes) and refuses anything
// that would drive a node's free count below zero.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SCHEDULER_SCHEDCLUSTER_H
#define FRENZY_SCHEDULER_SCHEDCLUSTER_H

#include "frenzy/Cluster/ClusterSpec.h"
#include "frenzy/Scheduler/Job.h"

namespace frenzy::sched {

struct SchedType {
  GpuType gpu;
  int64_t total = 0;   // GPUs of this type in the cluster
  int64_t perNode = 0; // the most on one node
  double intraGBs = 0; // the slowest intra-node link of its nodes
};

struct SchedNode {
  std::string name;
  int type = 0;
  int64_t count = 0, free = 0;
};

/// GPUs taken on one node.
struct NodeGrant {
  int node = 0;
  int64_t count = 0;
};
using Placement = std::vector<NodeGrant>;

enum class Fit { FirstFit, BestFit };

class SchedCluster {
public:
  /// Errors: a node whose GPU type neither the file nor the catalogue knows.
  static llvm::Expected<SchedCluster> build(const ClusterSpec &spec);

  const std::vector<SchedType> &types() const { return typeList; }
  const std::vector<SchedNode> &nodes() const { return nodeList; }
  const ClusterSpec &spec() const { return clusterSpec; }
  int typeIndex(llvm::StringRef name) const; // -1 when unknown
  int64_t totalGpus() const { return total; }
  int64_t freeGpus() const { return freeTotal; }
  int64_t freeOf(int type) const { return typeFree[type]; }
  double interNodeGBs() const; // network bandwidth per node, GB/s

  /// Takes the option's GPUs in whole groups of `group` (its TP degree) per
  /// node; nothing is taken when it cannot be placed.
  std::optional<Placement> allocate(const JobOption &o, Fit fit);
  /// Whether allocate() would succeed, without taking anything.
  bool fits(const JobOption &o) const;
  void release(const Placement &p);
  /// Takes exactly these grants (a placement just released); false and
  /// nothing taken when one is not free.
  bool take(const Placement &p);

private:
  bool place(const JobOption &o, Fit fit, Placement *out) const;
  ClusterSpec clusterSpec;
  std::vector<SchedType> typeList;
  std::vector<SchedNode> nodeList;
  std::vector<std::vector<int>> nodesOfType;
  std::vector<int64_t> typeFree;
  int64_t total = 0, freeTotal = 0;
};

} // namespace frenzy::sched

#endif
