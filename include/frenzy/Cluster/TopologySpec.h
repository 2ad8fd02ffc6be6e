//===- TopologySpec.h - the network topology as written ---------*- C++ -*-===//
//
// The `topology:` section of a cluster file, as plain data: racks (each in
// an optional zone) grouping the nodes, bandwidth and latency per link kind
// (within a rack, between racks of one zone, between zones), optional
// per-node-pair overrides, and all-reduces measured across node sets
// (frenzy-calibrate --links writes pairs and all-reduces, marked measured:
// achieved figures, which the cost model uses without an efficiency
// factor). Validated while it is read (TopologyYaml.cpp); Topology.h
// answers questions about it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_CLUSTER_TOPOLOGYSPEC_H
#define FRENZY_CLUSTER_TOPOLOGYSPEC_H

#include <optional>
#include <string>
#include <vector>

namespace frenzy {

/// One network link figure: Gb/s (network convention) and microseconds.
struct LinkFigure {
  double bandwidthGbps = 0;
  double latencyUs = 0;
};

struct RackSpec {
  std::string name;
  std::string zone; // empty: the cluster's one zone
  std::vector<std::string> nodes;
};

/// A message size and the seconds it took, measured (frenzy-calibrate).
struct SizeSeconds {
  double bytes = 0, seconds = 0;
};

struct NodePairSpec {
  std::string a, b;
  LinkFigure link;
  bool measured = false; // an achieved rate (frenzy-calibrate), not nominal
  /// One-way seconds by message size, ascending (`times:`): a link whose
  /// time is not latency + bytes / bandwidth (TCP windows, a shaper's
  /// bucket) is priced by these, the figure beyond the largest.
  std::vector<SizeSeconds> times;
};

/// An all-reduce among one rank per listed node: 2(P-1)/P x bytes over
/// `bus` bandwidth plus its latency (P the ranks; `bus` is the bus
/// bandwidth as NCCL's tests define it, so a ring paced by one link shows
/// that link's rate, and an algorithm that moves more bytes shows less).
struct AllReduceSpec {
  std::vector<std::string> nodes;
  LinkFigure bus;
  bool measured = false;
  std::vector<SizeSeconds> times; // by buffer bytes per rank, as above
};

struct TopologySpec {
  bool present = false; // the file has a topology: section
  std::vector<RackSpec> racks;
  std::optional<LinkFigure> intraRack, interRack, interZone;
  std::vector<NodePairSpec> pairs;
  std::vector<AllReduceSpec> allReduces;
};

} // namespace frenzy

#endif
