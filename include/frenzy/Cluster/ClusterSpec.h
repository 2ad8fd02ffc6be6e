//===- ClusterSpec.h - the cluster description (YAML) -----------*- C++ -*-===//
//
// What the user writes about their cluster: nodes, each with a GPU type and a
// count. Read with LLVM's YAML I/O. The partitioner extends this with links
// and the GPU catalogue; single-device plans need only the node list.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_CLUSTER_CLUSTERSPEC_H
#define FRENZY_CLUSTER_CLUSTERSPEC_H

#include "frenzy/Cluster/GpuCatalogue.h"
#include "frenzy/Cluster/TopologySpec.h"

#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace frenzy {

/// Limits on what a cluster file may describe. They keep every count the
/// planner multiplies well inside int64 and refuse a typo such as
/// `count: 99999999999` at once instead of planning for it until memory runs
/// out. The largest machines sold put 576 GPUs in one NVLink domain; the
/// totals leave room for ten times today's largest training clusters.
constexpr int64_t kMaxGpusPerNode = 1024;
constexpr int64_t kMaxClusterNodes = 65536;
constexpr int64_t kMaxClusterGpus = 1 << 20;
/// A cluster file at the node limit is a few MiB; a larger file is refused
/// before the YAML parser builds a tree for it.
constexpr int64_t kMaxClusterFileBytes = 16 << 20;

struct ClusterNode {
  std::string name;
  std::string gpu;  // GPU type, or "cpu" for CPU ranks
  int64_t count = 0;
  std::string link = "pcie";   // intra-node: nvlink or pcie
  double linkGBs = 0;          // intra-node bandwidth, GB/s (0: by link)
  std::string host;            // where its ranks run ("": the launcher's machine)
  double bandwidthGBs() const; // linkGBs or the link's default
};

/// The inter-node network: every node pair's link unless the topology
/// says otherwise.
struct ClusterNetwork {
  double bandwidthGbps = 25;   // Gb/s per node
  double latencyUs = 10;       // microseconds per message
};

struct ClusterSpec {
  std::string name;
  std::vector<ClusterNode> nodes;
  ClusterNetwork network;
  /// Racks, link kinds and node pairs (Topology.h answers link questions).
  TopologySpec topology;
  /// GPU types described in the file: new ones, or overrides of catalogue
  /// entries of the same name.
  std::vector<GpuType> gpuTypes;
  int64_t totalDevices() const;
  /// The file's description of a GPU type, else the catalogue's; null if
  /// neither knows it.
  const GpuType *gpuType(llvm::StringRef name) const;
};

/// Parses and validates a cluster file; errors name the file, the line and
/// the field.
llvm::Expected<ClusterSpec> readClusterFile(llvm::StringRef path);

} // namespace frenzy

#endif
