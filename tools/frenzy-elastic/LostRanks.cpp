//===- LostRanks.cpp - after a job went wrong, which ranks and nodes are gone ===//
#include "LostRanks.h"

#include "Processes.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

namespace frenzy::elastic {

std::optional<RankState> readRankState(const std::string &path) {
  std::ifstream in(path);
  std::string w[5];
  RankState s;
  int rank;
  if (in >> w[0] >> rank >> w[1] >> s.pid >> w[2] >> s.host >> w[3] >> s.step >>
      w[4] >> s.state)
    return s;
  return std::nullopt;
}

std::vector<int> silentRanks(const std::string &statusDir, size_t ranks) {
  std::vector<int> out;
  for (size_t r = 0; r < ranks; ++r) {
    auto s = readRankState(statusDir + "/rank-" + std::to_string(r));
    if (s && (s->state == "starting" || s->state == "running"))
      out.push_back(int(r));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>>
probeNodes(const std::string &frenzyLaunch, const std::string &planPath,
           const std::vector<std::string> &launchOptions, double timeout) {
  std::vector<std::string> argv = {frenzyLaunch, planPath, "--probe-nodes"};
  for (const std::string &a : launchOptions)
    if (a.rfind("--launch-", 0) == 0)
      argv.push_back(a);
  // frenzy-launch bounds each probe by --launch-timeout; this bounds the
  // whole (a few seconds more for its start).
  RunResult r = runWithTimeout(argv, timeout + 10);
  // "node 'n2' (host H) WHY": kept as "(host H) WHY".
  static const std::regex line("frenzy-launch: error: node '([^']+)' (.*)");
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream err(r.err);
  for (std::string l; std::getline(err, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line))
      out.push_back({m[1], m[2]});
  }
  return out;
}

std::vector<std::string> Loss::wholeNodes() const {
  std::vector<std::string> out;
  for (auto &[node, why] : unreachable)
    out.push_back(node);
  if (!plan)
    return out;
  std::map<std::string, int> ranksOn, silentOn;
  for (const std::string &n : plan->rankNode)
    ++ranksOn[n];
  for (int r : ranks)
    ++silentOn[plan->rankNode[size_t(r)]];
  // In node order (the plan's ranks'), each once.
  for (const std::string &n : plan->rankNode)
    if (silentOn[n] == ranksOn[n] && ranksOn[n] > 1 &&
        std::find(out.begin(), out.end(), n) == out.end())
      out.push_back(n);
  return out;
}

std::map<std::string, int> Loss::devices(const PlanInfo &info,
                                         const Membership &file) const {
  std::map<std::string, int> lost;
  std::vector<std::string> whole = wholeNodes();
  for (const std::string &n : whole)
    for (auto &[name, count] : file)
      if (name == n)
        lost[n] = count;
  for (int r : ranks) {
    const std::string &n = info.rankNode[size_t(r)];
    if (std::find(whole.begin(), whole.end(), n) == whole.end())
      ++lost[n];
  }
  return lost;
}

std::string Loss::describe(const PlanInfo &info, int signal) const {
  std::string sig =
      signal ? " (signal " + std::to_string(signal) + ")" : std::string();
  std::vector<std::string> whole = wholeNodes();
  std::string out;
  auto add = [&](const std::string &s) { out += (out.empty() ? "" : "; ") + s; };
  for (auto &[node, why] : unreachable)
    add("node " + node + " lost: it does not answer " + why);
  for (const std::string &n : whole) {
    bool probed = false;
    for (auto &[node, why] : unreachable)
      probed |= node == n;
    if (probed)
      continue;
    std::string list;
    for (int r : ranks)
      if (info.rankNode[size_t(r)] == n)
        list += (list.empty() ? "" : ", ") + std::to_string(r);
    add("node " + n + " lost: ranks " + list + " (all of its ranks) died" +
        sig);
  }
  for (int r : ranks) {
    const std::string &n = info.rankNode[size_t(r)];
    if (std::find(whole.begin(), whole.end(), n) == whole.end())
      add("rank " + std::to_string(r) + " (" + n + ", device " +
          std::to_string(info.rankDevice[size_t(r)]) + ") died" + sig);
  }
  return out;
}

} // namespace frenzy::elastic
