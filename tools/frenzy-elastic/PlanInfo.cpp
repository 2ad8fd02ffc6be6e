//===- PlanInfo.cpp - what frenzy-elastic needs to know of a plan ---------===//
#include "PlanInfo.h"

#include "Membership.h"
#include "plan.pb.h"
#include "plan/PlanFile.h"

#include <fstream>
#include <iterator>
#include <map>
#include <set>

namespace frenzy::elastic {

PlanInfo PlanInfo::read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  size_t offset = 0;
  std::string bad = plan::decodePlanFile(bytes, offset);
  frenzy::plan::Plan p;
  if (!in.eof() && !in)
    bad = "cannot read it";
  if (bad.empty() &&
      !p.ParseFromArray(bytes.data() + offset, int(bytes.size() - offset)))
    bad = "the contents do not parse";
  if (!bad.empty())
    throw ElasticError(path + ": " + bad + " (the plan frenzy-opt wrote)");
  PlanInfo info;
  info.path = path;
  info.seq = p.seq();
  info.globalBatch = p.global_batch() > 0 ? p.global_batch() : p.batch();
  info.predictedStepSeconds = p.predicted_step_seconds();
  for (const frenzy::plan::NodeHost &n : p.nodes())
    info.namesHosts |= !n.host().empty();
  for (const frenzy::plan::Rank &r : p.ranks()) {
    info.rankNode.push_back(r.node());
    info.rankDevice.push_back(r.device());
  }
  if (p.ranks_size() == 0 && p.devices_size() > 0) {
    info.rankNode.push_back(p.devices(0).node());
    info.rankDevice.push_back(p.devices(0).index());
  }
  // Pipelines with their stage counts and TP degrees, in pipeline order.
  std::map<int, std::map<int, int>> ranksPerStage; // pipeline -> stage -> n
  for (const frenzy::plan::StageProgram &sp : p.stages())
    ranksPerStage[sp.pipeline()][sp.stage()] = sp.ranks_size();
  int ranks = std::max<int>(1, p.ranks_size());
  std::string s = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (ranksPerStage.empty()) {
    s += ", one program";
  } else {
    std::vector<std::string> pipes;
    for (auto &[pipe, stages] : ranksPerStage) {
      std::string d = std::to_string(stages.size()) + " stage" +
                      (stages.size() == 1 ? "" : "s");
      std::set<int> tp;
      for (auto &[st, n] : stages)
        tp.insert(n);
      if (tp.size() != 1 || *tp.begin() != 1) {
        d += " x TP";
        for (int t : tp)
          d += " " + std::to_string(t);
      }
      pipes.push_back(d);
    }
    s += ": " + std::to_string(pipes.size()) + " pipeline" +
         (pipes.size() == 1 ? "" : "s") + " (";
    for (size_t k = 0; k < pipes.size(); ++k)
      s += (k ? ", " : "") + pipes[k];
    s += ")";
  }
  s += ", global batch " + std::to_string(info.globalBatch);
  if (p.micro_batch() > 0)
    s += ", micro-batch " + std::to_string(p.micro_batch());
  info.layout = s;
  return info;
}

double PlanInfo::predictedTokensPerSecond() const {
  if (predictedStepSeconds <= 0)
    return 0;
  return double(globalBatch * seq) / predictedStepSeconds;
}

std::string tokensText(double t) {
  if (t <= 0)
    return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f tokens/s", t);
  return buf;
}

} // namespace frenzy::elastic
