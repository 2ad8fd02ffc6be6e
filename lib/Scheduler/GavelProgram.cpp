//===- GavelProgram.cpp - Gavel's allocation as its linear program --------===//
//
// Gavel (OSDI'20) computes time shares x[j][t] of each job on each GPU
// type from a linear program over a throughput matrix; the round mechanism
// (GavelPolicy.cpp) then turns shares into leases. Two objectives:
//  - max-min fairness: maximise z with sum_t tput[j][t] x[j][t] >= z for
//    every job (tput normalised by the job's best type, the paper's
//    heterogeneity-aware normalisation up to a per-job constant);
//  - max sum throughput: maximise sum tput[j][t] x[j][t], the variant Sia's
//    artifact runs as "Gavel" (gavel_default_policy there).
// Capacity counts a share x of a job using `count` GPUs as x * count GPUs
// of that type (Gavel's scale factor).
//
//===----------------------------------------------------------------------===//
#include "Policies.h"
#include "frenzy/Scheduler/Solver.h"

#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

llvm::Expected<std::vector<std::vector<double>>>
frenzy::sched::gavelShares(const std::vector<std::vector<double>> &tput,
                           const std::vector<std::vector<int64_t>> &count,
                           const std::vector<int64_t> &capacity,
                           GavelObjective objective, double seconds) {
  bool maxMin = objective == GavelObjective::MaxMin;
  LinearProgram p(maxMin ? "gavel-max-min" : "gavel-max-sum-throughput");
  size_t n = tput.size(), types = capacity.size();
  int z = maxMin ? p.addColumn(1, 0, INFINITY) : -1;
  std::vector<std::vector<int>> col(n, std::vector<int>(types, -1));
  std::vector<std::vector<std::pair<int, double>>> perType(types);
  for (size_t j = 0; j < n; ++j) {
    std::vector<std::pair<int, double>> share, level;
    for (size_t t = 0; t < types; ++t) {
      if (tput[j][t] <= 0)
        continue;
      // Max-min alone leaves GPUs above the minimum level unused (any
      // split is optimal); a tiny sum-of-throughput term hands them out.
      col[j][t] = p.addColumn(maxMin ? 1e-3 * tput[j][t] / double(n) : tput[j][t], 0, 1);
      share.push_back({col[j][t], 1});
      level.push_back({col[j][t], tput[j][t]});
      perType[t].push_back({col[j][t], double(count[j][t])});
    }
    if (share.empty())
      continue; // a job no type runs takes no part (and no z row)
    p.addRow(share, -INFINITY, 1);
    if (maxMin) {
      level.push_back({z, -1});
      p.addRow(level, 0, INFINITY);
    }
  }
  for (size_t t = 0; t < types; ++t)
    if (!perType[t].empty())
      p.addRow(perType[t], -INFINITY, double(capacity[t]));
  LinearProgram::Limits limits;
  limits.seconds = seconds;
  auto s = p.solve(limits);
  if (!s)
    return s.takeError();
  std::vector<std::vector<double>> x(n, std::vector<double>(types, 0));
  for (size_t j = 0; j < n; ++j)
    for (size_t t = 0; t < types; ++t)
      if (col[j][t] >= 0)
        x[j][t] = std::max(0.0, s->values[size_t(col[j][t])]);
  return x;
}
