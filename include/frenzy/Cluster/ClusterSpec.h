//===- ClusterSpec.h - the cluster description (YAML) -----------*- C++ -*-===//
//
// What the user writes about their cluster: nodes, each with a GPU type and a
// count. Read with LLVM's YAML I/O. The partitioner extends this with links
// and the GPU catalogue; single-device plans need only the node list.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_CLUSTER_CLUSTERSPEC_H
#define FRENZY_CLUSTER_CLUSTERSPEC_H

#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace frenzy {

struct ClusterNode {
  std::string name;
  std::string gpu;  // GPU type, or "cpu" for CPU ranks
  int64_t count = 0;
};

struct ClusterSpec {
  std::string name;
  std::vector<ClusterNode> nodes;
  int64_t totalDevices() const;
};

/// Parses and validates a cluster file; errors name the file, the line and
/// the field.
llvm::Expected<ClusterSpec> readClusterFile(llvm::StringRef path);

} // namespace frenzy

#endif
