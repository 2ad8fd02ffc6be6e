//===- ClusterSpec.cpp - read the cluster description ---------------------===//
#include "frenzy/Cluster/ClusterSpec.h"

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
  }
  static std::string validate(IO &, ClusterNode &n) {
    if (n.name.empty())
      return "node 'name' must not be empty";
    if (n.count <= 0)
      return "node '" + n.name + "': 'count' must be positive";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ClusterNode)

template <> struct llvm::yaml::MappingTraits<ClusterSpec> {
  static void mapping(IO &io, ClusterSpec &c) {
    io.mapOptional("name", c.name);
    io.mapRequired("nodes", c.nodes);
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
    llvm::raw_string_ostream os(*static_cast<std::string *>(ctx));
    os << d.getFilename() << ":" << d.getLineNo() << ":" << d.getColumnNo() + 1
       << ": " << d.getMessage();
  };
  ClusterSpec spec;
  llvm::yaml::Input in((*buf)->getMemBufferRef(), nullptr, handler, &diag);
  in >> spec;
  if (in.error())
    return llvm::createStringError(
        in.error(), "%s",
        diag.empty() ? (path + ": invalid cluster file").str().c_str()
                     : diag.c_str());
  return spec;
}
