//===- PageRank.cpp - PageRank iterations as a side task ------------------===//
#include "PageRank.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace frenzy::rt {

static uint64_t splitmix(uint64_t &s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Graph Graph::random(int64_t nodes, int64_t degree, uint64_t seed) {
  if (nodes < 1 || nodes > (int64_t(1) << 30) || degree < 0)
    throw std::invalid_argument("pagerank: nodes must be in [1, 2^30] and "
                                "degree >= 0");
  Graph g;
  g.nodes = nodes;
  std::vector<std::pair<int32_t, int32_t>> edges; // (to, from)
  edges.reserve(size_t(nodes * degree));
  uint64_t s = seed;
  g.outDegree.assign(size_t(nodes), 0);
  for (int64_t u = 0; u < nodes; ++u)
    for (int64_t k = 0; k < degree; ++k) {
      int64_t v = int64_t(splitmix(s) % uint64_t(nodes));
      if (v == u)
        continue; // no self-links: some nodes end with fewer out-links
      edges.push_back({int32_t(v), int32_t(u)});
      ++g.outDegree[size_t(u)];
    }
  // Counting sort by target: incoming edges of each node, sources in
  // generation order.
  g.inStart.assign(size_t(nodes) + 1, 0);
  for (auto &e : edges)
    ++g.inStart[size_t(e.first) + 1];
  for (int64_t v = 0; v < nodes; ++v)
    g.inStart[size_t(v) + 1] += g.inStart[size_t(v)];
  g.inFrom.resize(edges.size());
  std::vector<int64_t> at(g.inStart.begin(), g.inStart.end() - 1);
  for (auto &e : edges)
    g.inFrom[size_t(at[size_t(e.first)]++)] = e.second;
  return g;
}

int64_t Graph::bytes() const {
  return int64_t(inStart.size() * sizeof(int64_t) +
                 inFrom.size() * sizeof(int32_t) +
                 outDegree.size() * sizeof(int32_t));
}

void PageRankTask::init(int64_t memoryBudget) {
  if (cfg.rowsPerStep < 1)
    throw std::invalid_argument("pagerank: rows per step must be >= 1");
  // What the task will hold, known before it allocates: refuse early.
  int64_t need = cfg.nodes * (8 + 8 + 4 + 3 * 8) + cfg.nodes * cfg.degree * 4;
  if (memoryBudget > 0 && need > memoryBudget)
    throw std::runtime_error("pagerank of " + std::to_string(cfg.nodes) +
                             " nodes needs about " + std::to_string(need) +
                             " bytes, over the budget of " +
                             std::to_string(memoryBudget));
  g = Graph::random(cfg.nodes, cfg.degree, cfg.seed);
  rank.assign(size_t(g.nodes), 1.0 / double(g.nodes));
  next.assign(size_t(g.nodes), 0.0);
  share.assign(size_t(g.nodes), 0.0);
  startIteration();
}

void PageRankTask::startIteration() {
  dangling = 0;
  for (int64_t u = 0; u < g.nodes; ++u) {
    int32_t d = g.outDegree[size_t(u)];
    if (d == 0)
      dangling += rank[size_t(u)];
    share[size_t(u)] = d ? rank[size_t(u)] / d : 0.0;
  }
  row = 0;
  partialResidual = 0;
}

bool PageRankTask::step() {
  if (converged || iters >= cfg.maxIterations)
    return false;
  const double n = double(g.nodes), d = cfg.damping;
  const double base = (1 - d) / n + d * dangling / n;
  int64_t end = std::min(g.nodes, row + cfg.rowsPerStep);
  for (int64_t v = row; v < end; ++v) {
    double s = 0;
    for (int64_t e = g.inStart[size_t(v)]; e < g.inStart[size_t(v) + 1]; ++e)
      s += share[size_t(g.inFrom[size_t(e)])];
    double r = base + d * s;
    partialResidual += std::fabs(r - rank[size_t(v)]);
    next[size_t(v)] = r;
  }
  row = end;
  if (row < g.nodes)
    return true;
  rank.swap(next);
  ++iters;
  lastResidual = partialResidual;
  converged = lastResidual < cfg.tolerance;
  if (converged || iters >= cfg.maxIterations)
    return false;
  startIteration();
  return true;
}

void PageRankTask::finish() {
  next.clear();
  next.shrink_to_fit();
  share.clear();
  share.shrink_to_fit();
}

int64_t PageRankTask::bytesInUse() const {
  return g.bytes() +
         int64_t((rank.capacity() + next.capacity() + share.capacity()) * 8);
}

std::string PageRankTask::progress() const {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%lld iterations, residual %.2e%s",
                (long long)iters, lastResidual,
                converged ? " (converged)" : "");
  return buf;
}

} // namespace frenzy::rt
