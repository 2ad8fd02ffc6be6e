//===- PlanInfo.h - what frenzy-elastic needs to know of a plan -*- C++ -*-===//
//
// Read from plan.bin (protobuf only): which node each rank runs on (to map
// a dead rank to the device it leaves out), the layout in one line, and the
// predicted throughput (global batch x sequence / predicted step seconds)
// that the transition log compares.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_ELASTIC_PLANINFO_H
#define FRENZY_TOOLS_ELASTIC_PLANINFO_H

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::elastic {

struct PlanInfo {
  std::string path;
  std::vector<std::string> rankNode; // by rank
  std::vector<int> rankDevice;
  bool namesHosts = false; // ranks start on the nodes' hosts (host: per node)
  int64_t globalBatch = 0, seq = 0;
  double predictedStepSeconds = 0;
  std::string layout; // "4 ranks: 2 pipelines of 2 stages, TP 1, ..."

  /// Throws ElasticError when the file is not a readable plan.
  static PlanInfo read(const std::string &path);
  /// Predicted tokens per second, 0 when the plan has no prediction.
  double predictedTokensPerSecond() const;
};

/// "1234 tokens/s", or "n/a" for 0.
std::string tokensText(double tokensPerSecond);

} // namespace frenzy::elastic

#endif
