//===- PageRank.h - PageRank iterations as a side task ----------*- C++ -*-===//
//
// A deterministic random graph (each node links to `degree` others drawn by
// a seeded generator; self-links dropped, duplicates kept as multi-edges)
// in compressed sparse rows of incoming edges, and the power iteration
// r' = (1 - d) / N + d * (sum over in-links r[u] / outdeg[u] + dangling / N)
// split into steps of `rowsPerStep` rows, so one step is short next to a
// pipeline bubble. It finishes when an iteration changes r by less than
// `tolerance` (L1) or after `maxIterations`.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_TASKS_PAGERANK_H
#define FRENZY_RUNTIME_SIDETASK_TASKS_PAGERANK_H

#include "SideTask.h"

#include <vector>

namespace frenzy::rt {

struct Graph {
  int64_t nodes = 0;
  std::vector<int64_t> inStart; // nodes + 1 offsets into inFrom
  std::vector<int32_t> inFrom;  // source of each incoming edge
  std::vector<int32_t> outDegree;
  /// `nodes` nodes with `degree` out-links each, from `seed`.
  static Graph random(int64_t nodes, int64_t degree, uint64_t seed);
  int64_t bytes() const;
};

class PageRankTask : public SideTask {
public:
  struct Config {
    int64_t nodes = 20000, degree = 8, rowsPerStep = 4000;
    double damping = 0.85, tolerance = 1e-10;
    int64_t maxIterations = 1000;
    uint64_t seed = 1;
  };
  explicit PageRankTask(Config c) : cfg(c) {}
  std::string name() const override { return "pagerank"; }
  void init(int64_t memoryBudget) override;
  bool step() override;
  void finish() override;
  int64_t bytesInUse() const override;
  std::string progress() const override;

  const Graph &graph() const { return g; }
  const std::vector<double> &ranks() const { return rank; }
  int64_t iterations() const { return iters; }
  double residual() const { return lastResidual; }

private:
  Config cfg;
  Graph g;
  std::vector<double> rank, next, share; // share[u] = rank[u] / outdeg[u]
  double dangling = 0, partialResidual = 0, lastResidual = 1;
  int64_t row = 0, iters = 0;
  bool converged = false;
  void startIteration();
};

} // namespace frenzy::rt

#endif
