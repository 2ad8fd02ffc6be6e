//===- TopologySpec.h - the network topology as written ---------*- C++ -*-===//
//
// The `topology:` section of a cluster file, as plain data: racks (each in
// an optional zone) grouping the nodes, bandwidth and latency per link kind
// (within a rack, between racks of one zone, between zones) and optional
// per-node-pair overrides. Validated while it is read (TopologyYaml.cpp);
// Topology.h answers questions about it.
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

struct NodePairSpec {
  std::string a, b;
  LinkFigure link;
};

struct TopologySpec {
  bool present = false; // the file has a topology: section
  std::vector<RackSpec> racks;
  std::optional<LinkFigure> intraRack, interRack, interZone;
  std::vector<NodePairSpec> pairs;
};

} // namespace frenzy

#endif
