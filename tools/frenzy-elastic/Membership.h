//===- Membership.h - the devices an elastic run may use --------*- C++ -*-===//
//
// frenzy-elastic reads the user's cluster file for its node list (name, GPU
// type, count) and writes derived copies into its run directory for
// frenzy-opt: the same file with the counts of the devices still present,
// nodes left with none dropped (and their names dropped from rack lists).
// The user's file is never written. Only the `nodes:` list is read here,
// in the block or flow style the cluster format allows; frenzy-opt checks
// the rest when it plans (this tool links no LLVM or MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_ELASTIC_MEMBERSHIP_H
#define FRENZY_TOOLS_ELASTIC_MEMBERSHIP_H

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace frenzy::elastic {

/// Bad input: one line, already naming the file and what to do.
struct ElasticError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NodeEntry {
  std::string name, gpu;
  int count = 0;
  // Where the entry is in the file (0-based lines): its first line, one
  // past its last, and the line holding its count.
  size_t first = 0, end = 0, countLine = 0;
};

/// Devices per node, in the file's node order.
using Membership = std::vector<std::pair<std::string, int>>;

class ClusterFile {
public:
  /// Throws ElasticError ("FILE:LINE: what") when the node list cannot be
  /// read.
  static ClusterFile read(const std::string &path);
  static ClusterFile parse(const std::string &text, const std::string &path);

  const std::vector<NodeEntry> &nodes() const { return entries; }
  Membership membership() const;
  /// The file's text with each node's count taken from `m` (nodes absent
  /// from `m` or at 0 are removed, with their names in `[a, b]` lists).
  std::string derive(const Membership &m) const;

private:
  std::string path;
  std::vector<std::string> lines;
  std::vector<NodeEntry> entries;
};

int deviceCount(const Membership &m);
/// "n0:2 n1:1 (3 devices)".
std::string describe(const Membership &m);
/// `m` less `lost` devices per node (never below 0).
Membership without(const Membership &m, const std::map<std::string, int> &lost);
/// What changed from `a` to `b`: "+n1:2", "-n0:1", ... ("" when equal);
/// `grew`/`shrank` say whether any node gained or lost devices.
std::string difference(const Membership &a, const Membership &b, bool *grew,
                       bool *shrank);

} // namespace frenzy::elastic

#endif
