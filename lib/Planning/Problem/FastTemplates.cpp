//===- FastTemplates.cpp - the fast solver's pipeline shapes --------------===//
//
// Step 1 of solveFast (FastSolver.cpp): per micro-batch size, the
// templates the assignment chooses from. Homogeneous pipelines per type
// and TP degree at several depths; mixed-type pipelines of two types (more
// memory first), of three types on small clusters, and with an equal share
// of every type as the fallback for models that need them all. Each is
// split by shapeTemplate (Templates.cpp).
//
//===----------------------------------------------------------------------===//
#include "FastSolver.h"

#include <algorithm>

namespace frenzy::plan {

void FastSearch::buildTemplates(int64_t mb, std::vector<Template> &out) {
  int64_t L = std::max<int64_t>(1, cost.layers());
  int K = int(p.devices.size());
  // Homogeneous: the smallest depth that fits, and deeper ones (more
  // stages trade bubbles for faster stages).
  for (int d = 0; d < K; ++d) {
    if (!usable(d))
      continue;
    for (int64_t tp : groups.tps[d]) {
      int64_t n = groups.groupsOf(d, tp), deepest = std::min(n, L);
      std::optional<int64_t> dmin;
      auto add = [&](int64_t depth) {
        auto t = shapeTemplate(cost, groups, std::vector<int>(depth, d), tp,
                               depth * tp > groups.maxPerNode[d], mb,
                               &smallestNeed);
        if (t)
          out.push_back(std::move(*t));
        return bool(t);
      };
      for (int64_t depth = 1; depth <= deepest && !dmin; ++depth)
        if (add(depth))
          dmin = depth;
      if (!dmin)
        continue;
      std::vector<int64_t> more;
      if (n <= 16)
        for (int64_t depth = *dmin + 1; depth <= deepest; ++depth)
          more.push_back(depth);
      else
        more = {*dmin + 1, *dmin + 2, 2 * *dmin, 4 * *dmin};
      std::sort(more.begin(), more.end());
      more.erase(std::unique(more.begin(), more.end()), more.end());
      for (int64_t depth : more)
        if (depth <= deepest)
          add(depth);
    }
  }
  // Mixed pipelines of two types, the larger memory first (stage 0 holds
  // the most micro-batches in flight under 1F1B).
  std::vector<int> order;
  for (int d = 0; d < K; ++d)
    if (usable(d))
      order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return p.devices[a].memoryBytes > p.devices[b].memoryBytes;
  });
  if (!mixedPipelines)
    return;
  for (size_t i = 0; i < order.size(); ++i)
    for (size_t j = i + 1; j < order.size(); ++j) {
      int a = order[i], b = order[j];
      std::vector<Template> pair;
      for (int64_t tp : groups.tps[a]) {
        if (!llvm::is_contained(groups.tps[b], tp))
          continue;
        int64_t na = groups.groupsOf(a, tp), nb = groups.groupsOf(b, tp);
        // Up to 4 groups of each; with many types (pairs grow as types^2)
        // up to 2 of the larger-memory one and 1, 2 or 4 of the other.
        bool many = order.size() > 5;
        int64_t maxA = many ? 2 : 4;
        for (int64_t x = 1; x <= std::min<int64_t>(maxA, na); ++x)
          for (int64_t y = 1; y <= std::min<int64_t>(4, nb) && x + y <= L;
               y += (many && y == 2) ? 2 : 1) {
            std::vector<int> stages(x, a);
            stages.insert(stages.end(), y, b);
            if (auto t = shapeTemplate(cost, groups, stages, tp, true, mb,
                                       nullptr))
              pair.push_back(std::move(*t));
          }
      }
      // Throughput per peak TFLOPS spent: the pair's templates that turn
      // compute into progress best.
      auto efficiency = [&](const Template &t) {
        double tflops = 0;
        for (int d = 0; d < K; ++d)
          tflops += double(t.gpus[d]) * p.devices[d].tensorTflops;
        return 1.0 / (t.bottleneck * tflops);
      };
      std::stable_sort(pair.begin(), pair.end(),
                       [&](const Template &x, const Template &y) {
                         return efficiency(x) > efficiency(y);
                       });
      // The six most efficient, and the two fastest of the rest.
      if (pair.size() > 6)
        std::stable_sort(pair.begin() + 6, pair.end(),
                         [](const Template &x, const Template &y) {
                           return x.bottleneck < y.bottleneck;
                         });
      for (size_t k = 0; k < pair.size() && k < 8; ++k)
        out.push_back(std::move(pair[k]));
    }
  // Three types in one pipeline (1-2 stage groups each), on small clusters
  // of few types, where the triples stay cheap.
  if (order.size() >= 3 && order.size() <= 5 && p.totalGpus() <= 16)
    for (size_t i = 0; i < order.size(); ++i)
      for (size_t j = i + 1; j < order.size(); ++j)
        for (size_t k = j + 1; k < order.size(); ++k) {
          int a = order[i], b = order[j], c = order[k];
          for (int64_t tp : groups.tps[a]) {
            if (!llvm::is_contained(groups.tps[b], tp) ||
                !llvm::is_contained(groups.tps[c], tp))
              continue;
            for (int64_t x = 1; x <= std::min<int64_t>(2, groups.groupsOf(a, tp)); ++x)
              for (int64_t y = 1; y <= std::min<int64_t>(2, groups.groupsOf(b, tp)); ++y)
                for (int64_t z = 1; z <= std::min<int64_t>(2, groups.groupsOf(c, tp)) && x + y + z <= L; ++z) {
                  std::vector<int> stages(x, a);
                  stages.insert(stages.end(), y, b);
                  stages.insert(stages.end(), z, c);
                  if (auto t = shapeTemplate(cost, groups, stages, tp, true,
                                             mb, nullptr))
                    out.push_back(std::move(*t));
                }
          }
        }
  // Every type's equal share, for models that need more than two types.
  if (order.size() > 2)
    for (int64_t tp : p.tpDegrees) {
      bool all = true;
      int64_t most = 0;
      for (int d : order) {
        all &= llvm::is_contained(groups.tps[d], tp);
        if (all)
          most = std::max(most, groups.groupsOf(d, tp));
      }
      if (!all)
        continue;
      int found = 0;
      for (int64_t P = 1; P <= most && found < 3; P = P < 4 ? P + 1 : P * 2) {
        std::vector<int> stages;
        for (int d : order)
          stages.insert(stages.end(), groups.groupsOf(d, tp) / P, d);
        if (int64_t(stages.size()) > L || stages.empty())
          continue;
        if (auto t = shapeTemplate(cost, groups, stages, tp, true, mb,
                                   nullptr)) {
          ++found;
          out.push_back(std::move(*t));
        }
      }
    }
}

} // namespace frenzy::plan
