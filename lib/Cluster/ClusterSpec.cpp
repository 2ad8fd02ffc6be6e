//===- ClusterSpec.cpp - read the cluster description ---------------------===//
//
// Every number is range-checked where it is read, so a field that is out of
// range is reported at its own line, and nothing the planner later multiplies
// can overflow (limits in ClusterSpec.h).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Cluster/ClusterSpec.h"

#include "frenzy/Cluster/DeviceProfile.h"

#include "TopologyYaml.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/YAMLTraits.h"

#include <cctype>
#include <cmath>

using namespace frenzy;

namespace {
/// A node's GPU count, read through its own scalar traits so that a value
/// out of range is reported at the line of the `count:` field.
struct DeviceCount {
  int64_t value = 0;
};
/// A finite, non-negative number with an upper bound; NaN and infinities
/// (which strtod accepts as "nan", "inf") would poison every comparison the
/// planner makes.
struct BoundedNumber {
  double value = 0;
  double limit = 0;
  const char *field = "";
  bool operator==(const BoundedNumber &o) const { return value == o.value; }
};
/// ScalarTraits::input returns a StringRef; the message must outlive the
/// call that reports it.
std::string &scalarMessage() {
  static thread_local std::string message;
  return message;
}
} // namespace

template <> struct llvm::yaml::ScalarTraits<DeviceCount> {
  static void output(const DeviceCount &c, void *, raw_ostream &os) {
    os << c.value;
  }
  static StringRef input(StringRef scalar, void *, DeviceCount &c) {
    std::string &msg = scalarMessage();
    if (scalar.getAsInteger(10, c.value)) {
      msg = "'count' must be a whole number of GPUs, not '" + scalar.str() +
            "'";
      return msg;
    }
    if (c.value <= 0 || c.value > kMaxGpusPerNode) {
      msg = "'count' " + scalar.str() + " is outside 1 to " +
            std::to_string(kMaxGpusPerNode) +
            " GPUs per node; describe a larger machine as several nodes";
      return msg;
    }
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct llvm::yaml::ScalarTraits<BoundedNumber> {
  static void output(const BoundedNumber &n, void *, raw_ostream &os) {
    os << n.value;
  }
  static StringRef input(StringRef scalar, void *, BoundedNumber &n) {
    std::string &msg = scalarMessage();
    double v;
    if (scalar.getAsDouble(v) || !std::isfinite(v) || v < 0 || v > n.limit) {
      msg = "'" + std::string(n.field) + "' must be a number from 0 to " +
            std::to_string(int64_t(n.limit)) + ", not '" + scalar.str() +
            "'";
      return msg;
    }
    n.value = v;
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

/// Maps an optional or required double field through BoundedNumber.
static void mapNumber(llvm::yaml::IO &io, const char *key, double &value,
                      double limit, std::optional<double> fallback) {
  BoundedNumber n{fallback.value_or(0), limit, key};
  if (fallback)
    io.mapOptional(key, n, BoundedNumber{*fallback, limit, key});
  else
    io.mapRequired(key, n);
  value = n.value;
}

template <> struct llvm::yaml::MappingTraits<ClusterNode> {
  static void mapping(IO &io, ClusterNode &n) {
    io.mapRequired("name", n.name);
    io.mapRequired("gpu", n.gpu);
    DeviceCount count{n.count};
    io.mapRequired("count", count);
    n.count = count.value;
    io.mapOptional("link", n.link, std::string("pcie"));
    // 100 TB/s: ten times any link built.
    mapNumber(io, "link_bandwidth_gbs", n.linkGBs, 1e5, 0.0);
    io.mapOptional("host", n.host);
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
    // The host goes into a hostfile line and an ssh command: one word.
    for (char ch : n.host)
      if (!std::isalnum((unsigned char)ch) && !llvm::StringRef("-._:").contains(ch))
        return "node '" + n.name + "': 'host' must be a hostname or an "
               "address (letters, digits, '-', '.', '_', ':'), not '" +
               n.host + "'";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ClusterNode)

template <> struct llvm::yaml::MappingTraits<ClusterNetwork> {
  static void mapping(IO &io, ClusterNetwork &n) {
    mapNumber(io, "bandwidth_gbps", n.bandwidthGbps, 1e6, 25.0);
    mapNumber(io, "latency_us", n.latencyUs, 1e6, 10.0);
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
    // A catalogue type named only to give it a profile keeps its figures.
    const GpuType *known = findGpuType(g.name);
    if (known) {
      std::string name = g.name;
      g = *known;
      g.name = name;
    }
    // Bounded so that bytes stay far inside int64 (1 PiB per GPU).
    double gib = double(g.memoryBytes) / double(1ll << 30);
    auto fallback = [&](double v) {
      return known ? std::optional<double>(v) : std::nullopt;
    };
    mapNumber(io, "memory_gib", gib, double(1 << 20), fallback(gib));
    g.memoryBytes = int64_t(gib * double(1ll << 30));
    mapNumber(io, "tflops", g.tensorTflops, 1e6, fallback(g.tensorTflops));
    mapNumber(io, "bandwidth_gbs", g.memoryGBs, 1e6, fallback(g.memoryGBs));
    io.mapOptional("bf16", g.bf16, known ? known->bf16 : true);
    io.mapOptional("profile", g.profilePath);
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
    if (int64_t(c.nodes.size()) > kMaxClusterNodes)
      return "'nodes' lists " + std::to_string(c.nodes.size()) +
             " nodes, more than the limit of " +
             std::to_string(kMaxClusterNodes) +
             "; plan a part of the cluster";
    int64_t total = 0;
    for (const ClusterNode &n : c.nodes)
      if (llvm::AddOverflow(total, n.count, total) || total > kMaxClusterGpus)
        return "the nodes hold more than the limit of " +
               std::to_string(kMaxClusterGpus) +
               " GPUs in total; plan a part of the cluster";
    llvm::StringSet<> seen;
    for (const ClusterNode &n : c.nodes)
      if (!seen.insert(n.name).second)
        return "duplicate node name '" + n.name + "'";
    // Two nodes on one host would put both nodes' ranks on one machine
    // while the planner counts two machines' GPUs and links.
    llvm::StringMap<std::string> hosts;
    for (const ClusterNode &n : c.nodes) {
      if (n.host.empty())
        continue;
      auto [it, added] = hosts.insert({n.host, n.name});
      if (!added)
        return "nodes '" + it->second + "' and '" + n.name +
               "' have the same host '" + n.host + "'";
    }
    bool some = !hosts.empty();
    for (const ClusterNode &n : c.nodes)
      if (some && n.host.empty())
        return "node '" + n.name + "' has no 'host' while other nodes name "
               "theirs: name every node's host or none";
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
  if (int64_t((*buf)->getBufferSize()) > kMaxClusterFileBytes)
    return llvm::createStringError(
        std::errc::file_too_large,
        "%s: the cluster file is %lld bytes, more than the limit of %lld; a "
        "cluster file lists nodes, not data",
        path.str().c_str(), (long long)(*buf)->getBufferSize(),
        (long long)kMaxClusterFileBytes);
  std::string diag;
  // The first diagnostic is the cause; validation of the enclosing mapping
  // would only repeat it in other words.
  auto handler = [](const llvm::SMDiagnostic &d, void *ctx) {
    auto &first = *static_cast<std::string *>(ctx);
    if (!first.empty())
      return;
    llvm::raw_string_ostream os(first);
    os << d.getFilename() << ":" << d.getLineNo() << ":" << d.getColumnNo() + 1
       << ": ";
    // YAML I/O quotes keys as written, and a plain-scalar key may span lines:
    // control characters are written as \xHH so the error stays one line.
    for (unsigned char c : d.getMessage()) {
      if (c >= 0x20 && c != 0x7f)
        os << char(c);
      else
        os << llvm::format("\\x%02x", c);
    }
  };
  ClusterSpec spec;
  TopologyReadState topology;
  llvm::yaml::Input in((*buf)->getMemBufferRef(), &topology, handler, &diag);
  // A file with no document (empty, only comments or "---"), or one whose
  // document does not parse, leaves YAML I/O no node to report a missing
  // field at, and it crashes trying: both stop here.
  bool hasDocument = in.setCurrentDocument();
  if (in.error())
    return llvm::createStringError(
        in.error(), "%s",
        diag.empty() ? (path + ": not a YAML document").str().c_str()
                     : diag.c_str());
  if (!hasDocument)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "%s: the cluster file is empty; it lists the nodes, e.g. 'nodes: "
        "[{name: n0, gpu: A100-80G, count: 8}]'",
        path.str().c_str());
  // Not `in >> spec`: that sets the document again, and a document's nodes
  // can be walked only once.
  llvm::yaml::EmptyContext context;
  llvm::yaml::yamlize(in, spec, true, context);
  if (in.error())
    return llvm::createStringError(
        in.error(), "%s",
        diag.empty() ? (path + ": invalid cluster file").str().c_str()
                     : diag.c_str());
  // Profiles are named relative to the cluster file.
  for (GpuType &g : spec.gpuTypes) {
    if (g.profilePath.empty())
      continue;
    llvm::SmallString<256> file(g.profilePath);
    if (llvm::sys::path::is_relative(file)) {
      file = llvm::sys::path::parent_path(path);
      llvm::sys::path::append(file, g.profilePath);
    }
    auto profile = readDeviceProfile(file.str().str(), g.name);
    if (!profile)
      return llvm::createStringError(
          std::errc::invalid_argument, "%s: GPU type '%s': %s",
          path.str().c_str(), g.name.c_str(),
          llvm::toString(profile.takeError()).c_str());
    g.profile = std::make_shared<DeviceProfile>(std::move(*profile));
  }
  return spec;
}
