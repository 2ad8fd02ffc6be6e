//===- Topology.h - links between the nodes of a cluster --------*- C++ -*-===//
//
// What the cost model asks about the network: the link between two nodes
// (bandwidth and latency, by kind: within a node, within a rack, between
// racks, between zones, or a per-pair override), point-to-point transfer
// time, and ring collectives over a group, which run at the pace of the
// slowest link in the ring. Plain data and arithmetic, no MLIR: the search
// and the multi-job scheduler both use it. A cluster file without a
// topology: section gives every node pair the network: figure, as before.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_CLUSTER_TOPOLOGY_H
#define FRENZY_CLUSTER_TOPOLOGY_H

#include "frenzy/Cluster/ClusterSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>

namespace frenzy {

enum class LinkKind { IntraNode, Network, IntraRack, InterRack, InterZone, Pair };
llvm::StringRef linkKindName(LinkKind k);

struct Link {
  double bytesPerSecond = 0; // one direction, at the link's nominal rate
  double latencySeconds = 0; // per message
  LinkKind kind = LinkKind::Network;
  /// An achieved rate (frenzy-calibrate): used as it is, where nominal
  /// figures are multiplied by the cost model's efficiency.
  bool measured = false;
  /// `efficiency` for a nominal link, 1 for a measured one.
  double efficiency(double nominal) const { return measured ? 1.0 : nominal; }
  /// Measured seconds by message size (the topology's `times:`), or null:
  /// then latency + bytes / bandwidth. Shared: Links are copied freely.
  std::shared_ptr<const std::vector<SizeSeconds>> times;
  /// Seconds of one message of `bytes` (an all-reduce's: `factor` x bytes
  /// on the wire per byte of buffer), `efficiency` for a nominal link.
  double seconds(double bytes, double efficiency, double factor = 1) const;
};

class Topology {
public:
  explicit Topology(const ClusterSpec &cluster);
  /// From plain data (a planning problem): node names, each node's own GPU
  /// link in GB/s, the network figure and the topology section.
  Topology(std::vector<std::string> nodeNames, std::vector<double> nodeLinkGBs,
           LinkFigure network, TopologySpec spec);

  /// The link between nodes a and b (indices into ClusterSpec::nodes); the
  /// node's own GPU link when a == b.
  Link link(int a, int b) const;
  double bandwidth(int a, int b) const { return link(a, b).bytesPerSecond; }
  double latency(int a, int b) const { return link(a, b).latencySeconds; }

  /// One message of `bytes` from a to b, at `efficiency` of the bandwidth
  /// (the measured time at that size where the pair has `times:`).
  double sendSeconds(int a, int b, double bytes, double efficiency) const;

  /// The slowest link of the best ring through `nodes` (visited rack by
  /// rack, see placementOrder), latency the largest on it; the node's own
  /// link for one node.
  Link ringBottleneck(llvm::ArrayRef<int> nodes) const;
  /// Ring all-reduce of `bytes` per rank among `members` ranks placed on
  /// `nodes`: 2(P-1)/P x bytes over the ring's slowest link plus that
  /// link's latency once. A ring pays 2(P-1) latencies, but for the small
  /// messages where latency matters NCCL switches to tree and low-latency
  /// protocols; one latency keeps the figure the planner was calibrated
  /// with (docs/partitioner.md).
  /// Where the topology has an all-reduce measured across exactly the
  /// distinct nodes of `nodes` (frenzy-calibrate --links), its bus
  /// bandwidth and latency take the place of the ring's slowest link.
  double ringAllReduceSeconds(llvm::ArrayRef<int> nodes, int64_t members,
                              double bytes, double efficiency) const;
  /// The measured all-reduce across exactly the distinct nodes of `nodes`
  /// (bus bandwidth and latency, kind Pair), or null.
  const Link *measuredAllReduce(llvm::ArrayRef<int> nodes) const;

  /// `nodes` ordered zone by zone and rack by rack (first appearance in
  /// the file), file order within a rack: drawing stage groups in this
  /// order keeps a pipeline's consecutive stages within a rack.
  std::vector<int> placementOrder(llvm::ArrayRef<int> nodes) const;
  /// The fastest link between two different nodes of `nodes` (the network
  /// when fewer than two): what a pipeline spanning them may hope for.
  Link fastestBetween(llvm::ArrayRef<int> nodes) const;
  /// Whether a TP group may span nodes a and b: their link carries at
  /// least half of the slower node's own GPU link (NVLink-class networks);
  /// otherwise TP's per-layer all-reduces would stall on it.
  bool tensorParallelAcross(int a, int b) const;

  /// The rack index of a node (-1 without racks), and the racks' names.
  int rackOf(int node) const { return rack.empty() ? -1 : rack[node]; }
  const TopologySpec &spec() const { return topo; }
  /// "2 racks (rack-a: a0 a1; rack-b: b0 b1); intra-rack 200 Gb/s 5 us,
  /// inter-rack 10 Gb/s 50 us" for reports; empty without a topology.
  std::string summary() const;

private:
  std::vector<std::string> names;        // per node
  std::vector<double> nodeLink;          // per node, bytes/s
  LinkFigure network;
  TopologySpec topo;
  std::vector<int> rack;                 // per node
  std::vector<int> zone;                 // per rack
  llvm::DenseMap<uint64_t, Link> pairs;  // key: min * 2^32 + max
  std::vector<std::pair<std::vector<int>, Link>> allReduces; // sorted nodes
};

} // namespace frenzy

#endif
