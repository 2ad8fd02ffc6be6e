//===- TopologyYaml.h - reading the topology: section -----------*- C++ -*-===//
//
// Internal to lib/Cluster: ClusterSpec.cpp maps `topology:` with these
// traits. The read state carries the file's node names (read before the
// topology) and which rack or pair a node name belongs to, so that an
// unknown node, a node in two racks, a repeated pair or a node listed twice
// in one all-reduce is reported at the
// line of the offending name.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_CLUSTER_TOPOLOGYYAML_H
#define FRENZY_LIB_CLUSTER_TOPOLOGYYAML_H

#include "frenzy/Cluster/TopologySpec.h"

#include "llvm/Support/YAMLTraits.h"

#include <map>
#include <set>

namespace frenzy {

struct TopologyReadState {
  std::vector<std::string> nodes;         // the file's node names
  std::map<std::string, std::string> rackOf;
  std::string rack;                       // the rack being read, or empty
  bool inPair = false;
  std::vector<std::string> pair;          // names read of the current pair
  std::set<std::pair<std::string, std::string>> pairs; // seen, sorted
  bool inAllReduce = false;
  std::vector<std::string> group;         // names read of the all-reduce
  std::set<std::vector<std::string>> groups; // all-reduce node sets, sorted
  std::string message;                    // storage for a scalar's error
};

} // namespace frenzy

template <> struct llvm::yaml::MappingTraits<frenzy::TopologySpec> {
  static void mapping(IO &io, frenzy::TopologySpec &t);
  static std::string validate(IO &io, frenzy::TopologySpec &t);
};

#endif
