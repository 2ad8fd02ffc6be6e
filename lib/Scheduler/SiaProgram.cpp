//===- SiaProgram.cpp - the per-round assignment program (Sia's MILP) -----===//
//
// Sia's allocation each round is an integer program: one binary per (job,
// configuration), at most one configuration per job, GPUs per type within
// the cluster's count, maximising the sum of the configurations' values
// (Policies.h). It is a multiple-choice knapsack with one row per GPU
// type, so its LP relaxation is tight (at most one fractional job per
// type) and CBC closes it in a few nodes; the greedy solution seeds it.
// The greedy solver is the documented fast mode (--baseline-mode=greedy):
// optimal for one type and concave values, close for several.
//
//===----------------------------------------------------------------------===//
#include "Policies.h"
#include "frenzy/Scheduler/Solver.h"

#include <cmath>
#include <queue>

using namespace frenzy;
using namespace frenzy::sched;

std::vector<int> frenzy::sched::assignGreedy(const Assignment &a) {
  size_t n = a.jobs.size();
  std::vector<int64_t> room = a.capacity;
  std::vector<int> choice(n, -1), version(n, 0);
  auto bestMove = [&](size_t k, double &gain) {
    const auto &cands = a.jobs[k];
    int cur = choice[k], best = -1;
    double v0 = cur >= 0 ? cands[cur].value : 0;
    int64_t g0 = cur >= 0 ? cands[cur].count : 0;
    for (size_t c = 0; c < cands.size(); ++c) {
      const Candidate &o = cands[c];
      if (o.count <= g0)
        continue;
      int64_t have = room[o.type] + (cur >= 0 && cands[cur].type == o.type
                                         ? g0 : 0);
      if (o.count > have)
        continue;
      double v = (o.value - v0) / double(o.count - g0);
      if (v > 0 && (best < 0 || v > gain))
        best = int(c), gain = v;
    }
    return best;
  };
  struct Entry {
    double gain;
    size_t job;
    int version, cand;
    bool operator<(const Entry &e) const { return gain < e.gain; }
  };
  std::priority_queue<Entry> heap;
  auto push = [&](size_t k) {
    double g = 0;
    int c = bestMove(k, g);
    if (c >= 0)
      heap.push({g, k, ++version[k], c});
  };
  for (size_t k = 0; k < n; ++k)
    push(k);
  while (!heap.empty()) {
    Entry e = heap.top();
    heap.pop();
    if (e.version != version[e.job])
      continue;
    const auto &cands = a.jobs[e.job];
    const Candidate &o = cands[e.cand];
    int cur = choice[e.job];
    int64_t have = room[o.type] + (cur >= 0 && cands[cur].type == o.type
                                       ? cands[cur].count : 0);
    if (o.count > have) {
      push(e.job); // the room shrank since: its next best
      continue;
    }
    if (cur >= 0)
      room[cands[cur].type] += cands[cur].count;
    room[o.type] -= o.count;
    choice[e.job] = e.cand;
    push(e.job);
  }
  return choice;
}

llvm::Expected<std::vector<int>>
frenzy::sched::assignMilp(const Assignment &a, const std::vector<int> &start,
                          double seconds) {
  // The relaxation first: this program's LP optimum is integral in most
  // rounds (a multiple-choice knapsack with one row per GPU type has at
  // most one fractional job per type), and then it is the MILP's optimum
  // too, found by Clp in a fraction of branch-and-cut's time.
  for (bool integer : {false, true}) {
    LinearProgram p("sia-allocation", /*maximize=*/true);
    std::vector<std::vector<int>> col(a.jobs.size());
    std::vector<std::vector<std::pair<int, double>>> perType(
        a.capacity.size());
    std::vector<double> seed;
    for (size_t k = 0; k < a.jobs.size(); ++k) {
      std::vector<std::pair<int, double>> one;
      for (size_t c = 0; c < a.jobs[k].size(); ++c) {
        const Candidate &o = a.jobs[k][c];
        int x = p.addColumn(o.value, 0, 1, integer);
        col[k].push_back(x);
        one.push_back({x, 1});
        perType[size_t(o.type)].push_back({x, double(o.count)});
        seed.push_back(k < start.size() && start[k] == int(c) ? 1 : 0);
      }
      if (!one.empty())
        p.addRow(one, -INFINITY, 1);
    }
    for (size_t t = 0; t < a.capacity.size(); ++t)
      if (!perType[t].empty())
        p.addRow(perType[t], -INFINITY, double(a.capacity[t]));
    LinearProgram::Limits limits;
    limits.seconds = seconds;
    limits.relativeGap = 1e-4; // Sia's artifact: allowable gap 0.01%
    auto s = p.solve(limits, integer ? &seed : nullptr);
    if (!s)
      return s.takeError();
    bool integral = true;
    for (double v : s->values)
      integral &= std::abs(v - std::round(v)) < 1e-6;
    if (!integer && !integral)
      continue; // branch and cut
    std::vector<int> choice(a.jobs.size(), -1);
    for (size_t k = 0; k < a.jobs.size(); ++k)
      for (size_t c = 0; c < col[k].size(); ++c)
        if (s->values[size_t(col[k][c])] > 0.5)
          choice[k] = int(c);
    return choice;
  }
  return std::vector<int>(a.jobs.size(), -1); // not reached: the loop returns
}
