//===- ClusterYamlFuzzer.cpp - fuzz the cluster-file reader ---------------===//
//
// Any bytes as a cluster YAML file: the reader must refuse with one error
// line, or give a cluster inside the limits (ClusterSpec.h) whose every
// node names a non-empty GPU type and whose numbers are finite.
//
//===----------------------------------------------------------------------===//
#include "../runtime/FuzzInputFile.h"

#include "frenzy/Cluster/ClusterSpec.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace frenzy;

[[noreturn]] static void finding(const char *what, const std::string &detail) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::scratchDir() + "/cluster.yaml";
  fuzz::writeFile(path, data, size);
  auto cluster = readClusterFile(path);
  if (!cluster) {
    std::string message = llvm::toString(cluster.takeError());
    if (message.empty() || message.find('\n') != std::string::npos)
      finding("an error that is not one line", message);
    return 0;
  }
  int64_t total = cluster->totalDevices();
  if (cluster->nodes.empty() || total <= 0 || total > kMaxClusterGpus ||
      int64_t(cluster->nodes.size()) > kMaxClusterNodes)
    finding("a cluster outside the limits", std::to_string(total));
  for (const ClusterNode &n : cluster->nodes) {
    if (n.count <= 0 || n.count > kMaxGpusPerNode ||
        !std::isfinite(n.bandwidthGBs()) || n.bandwidthGBs() <= 0)
      finding("a node outside the limits", n.name);
    (void)cluster->gpuType(n.gpu);
  }
  if (!std::isfinite(cluster->network.bandwidthGbps) ||
      !std::isfinite(cluster->network.latencyUs))
    finding("a network figure that is not finite", "");
  for (const GpuType &g : cluster->gpuTypes)
    if (g.memoryBytes <= 0 || !std::isfinite(g.tensorTflops) ||
        !std::isfinite(g.memoryGBs))
      finding("a GPU type outside the limits", g.name);
  return 0;
}
