//===- ClusterSpec.cpp - read the cluster description ---------------------===//
#include "frenzy/Cluster/ClusterSpec.h"

#include "TopologyYaml.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"

using namespace frenzy;

template <> struct llvm::yaml::MappingTraits<ClusterNode> {
  static void mapping(IO &io, ClusterNode &n) {
    io.mapRequired("name", n.name);
    io.mapRequired("gpu", n.gpu);
    io.mapRequired("count", n.count);
    io.mapOptional("link", n.link, std::string("pcie"));
    io.mapOptional("link_bandwidth_gbs", n.linkGBs, 0.0);
  }
  static std::string validate(IO &, ClusterNode &n) {
    if (n.name.empty())
      return "node 'name' must not be empty";
    if (n.count <= 0)
      return "node '" + n.name + "': 'count' must be positive";
    if (n.link != "nvlink" && n.link != "pcie")
      return "node '" + n.name + "': 'link' must be nvlink or pcie, not '" +
             n.link + "'";
    if (n.linkGBs < 0)
      return "node '" + n.name + "': 'link_bandwidth_gbs' must be positive";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ClusterNode)

template <> struct llvm::yaml::MappingTraits<ClusterNetwork> {
  static void mapping(IO &io, ClusterNetwork &n) {
    io.mapOptional("bandwidth_gbps", n.bandwidthGbps, 25.0);
    io.mapOptional("latency_us", n.latencyUs, 10.0);
  }
  static std::string validate(IO &, ClusterNetwork &n) {
    if (n.bandwidthGbps <= 0)
      return "network 'bandwidth_gbps' must be positive";
    if (n.latencyUs < 0)
      return "network 'latency_us' must not be negative";
    return "";
  }
};

template <> struct llvm::yaml::MappingTraits<GpuType> {
  static void mapping(IO &io, GpuType &g) {
    io.mapRequired("name", g.name);
    double gib = double(g.memoryBytes) / double(1ll << 30);
    io.mapRequired("memory_gib", gib);
    g.memoryBytes = int64_t(gib * double(1ll << 30));
    io.mapRequired("tflops", g.tensorTflops);
    io.mapRequired("bandwidth_gbs", g.memoryGBs);
    io.mapOptional("bf16", g.bf16, true);
    g.source = "cluster file";
  }
  static std::string validate(IO &, GpuType &g) {
    if (g.memoryBytes <= 0 || g.tensorTflops <= 0 || g.memoryGBs <= 0)
      return "GPU type '" + g.name +
             "': memory_gib, tflops and bandwidth_gbs must be positive";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(GpuType)

template <> struct llvm::yaml::MappingTraits<ClusterSpec> {
  static void mapping(IO &io, ClusterSpec &c) {
    io.mapOptional("name", c.name);
    io.mapRequired("nodes", c.nodes);
    // The topology names nodes: it is read after them, whatever the order
    // in the file.
    if (auto *s = static_cast<TopologyReadState *>(io.getContext()))
      for (const ClusterNode &n : c.nodes)
        s->nodes.push_back(n.name);
    io.mapOptional("network", c.network);
    io.mapOptional("topology", c.topology);
    io.mapOptional("gpu_types", c.gpuTypes);
  }
  static std::string validate(IO &, ClusterSpec &c) {
    if (c.nodes.empty())
      return "'nodes' must list at least one node";
    llvm::StringSet<> seen;
    for (const ClusterNode &n : c.nodes)
      if (!seen.insert(n.name).second)
        return "duplicate node name '" + n.name + "'";
    return "";
  }
};

double ClusterNode::bandwidthGBs() const {
  if (linkGBs > 0)
    return linkGBs;
  // NVLink 3 (A100): 600 GB/s total, 300 GB/s each way; PCIe 4 x16: 32 GB/s
  // each way, ~25 GB/s achieved.
  return link == "nvlink" ? 300.0 : 25.0;
}

const GpuType *ClusterSpec::gpuType(llvm::StringRef name) const {
  for (const GpuType &g : gpuTypes)
    if (name.equals_insensitive(g.name))
      return &g;
  return findGpuType(name);
}

int64_t ClusterSpec::totalDevices() const {
  int64_t n = 0;
  for (const ClusterNode &node : nodes)
    n += node.count;
  return n;
}

llvm::Expected<ClusterSpec> frenzy::readClusterFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(), "%s: cannot read: %s",
                                   path.str().c_str(),
                                   buf.getError().message().c_str());
  std::string diag;
  auto handler = [](const llvm::SMDiagnostic &d, void *ctx) {
    // The first error is the one to fix; later ones follow from it.
    if (!static_cast<std::string *>(ctx)->empty())
      return;
    llvm::raw_string_ostream os(*static_cast<std::string *>(ctx));
    os << d.getFilename() << ":" << d.getLineNo() << ":" << d.getColumnNo() + 1
       << ": " << d.getMessage();
  };
  ClusterSpec spec;
  TopologyReadState topology;
  llvm::yaml::Input in((*buf)->getMemBufferRef(), &topology, handler, &diag);
  in >> spec;
  if (in.error())
    return llvm::createStringError(
        in.error(), "%s",
        diag.empty() ? (path + ": invalid cluster file").str().c_str()
                     : diag.c_str());
  return spec;
}
