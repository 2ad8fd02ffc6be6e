//===- FastSolver.cpp - the polynomial partition search -------------------===//
//
// Per micro-batch size:
//  1. Templates (FastTemplates.cpp). Per GPU type and TP degree, homogeneous pipelines of the
//     smallest depth that fits in memory and several deeper ones; per
//     ordered pair of types (more memory first), mixed pipelines of 1-4
//     stage groups of each, their layers split by the bottleneck bisection
//     (so each stage takes layers in proportion to its speed, within its
//     memory); the few most compute-efficient per pair are kept. When no
//     single type or pair holds the model, pipelines with an equal share of
//     every type's groups. O(types^2 x layers x log) shapes.
//  2. Assignment, by coordinate descent: per type a "fill" (as many
//     pipelines of one template as its free GPUs allow, the remainder
//     filled with the best template that fits it, so pipelines of one type
//     may differ in depth), or nothing; per mixed template a count. Each
//     move is scored by water-filling the batch over the template counts
//     (a bisection on the makespan, O(templates) per probe) plus the
//     all-reduce and optimizer estimate. Rounds until nothing improves.
//     Memory is O(templates), independent of how many nodes a type has.
//  3. The best few assignments are placed on the nodes and scored exactly;
//     then idle GPUs are offered to the plan one pipeline at a time
//     (IdleGpus.cpp) and each that stays idle gets its reason.
// Everything iterates in a fixed order: the same input gives the same plan.
//
//===----------------------------------------------------------------------===//
#include "FastSolver.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace frenzy::plan {

FastSearch::FastSearch(const PlanProblem &problem)
    : p(problem), cost(problem), groups(problem),
      smallestNeed(problem.devices.size(), INT64_MAX) {}

bool FastSearch::usable(int d) const {
  return p.devices[d].unusable.empty() && groups.gpus[d] > 0;
}

FastSearch::Quick FastSearch::quick(const std::vector<Template> &ts,
                                    const std::vector<int64_t> &counts,
                                    int64_t mb) const {
  // Water-filling over templates (their pipelines are identical): the
  // makespan is the smallest T at which they take every micro-batch.
  int64_t M = p.globalBatch / mb;
  std::vector<size_t> live;
  for (size_t i = 0; i < ts.size(); ++i)
    if (counts[i] > 0)
      live.push_back(i);
  Quick q;
  if (live.empty())
    return q;
  auto count = [&](double T) {
    int64_t n = 0;
    for (size_t i : live)
      n += counts[i] * PlanCost::microBatchesWithin(T, ts[i].bottleneck,
                                                    ts[i].depth());
    return n;
  };
  double lo = 0, hi = 1;
  while (count(hi) < M)
    hi *= 2;
  for (int i = 0; i < 40; ++i) { // 2^-40 of the makespan
    double mid = 0.5 * (lo + hi);
    (count(mid) >= M ? hi : lo) = mid;
  }
  // Per template: micro-batches per pipeline at the makespan, and how many
  // pipelines keep work once the surplus is trimmed from the latest.
  struct Use {
    size_t i;
    int64_t m, used;
  };
  std::vector<Use> uses;
  int64_t total = 0;
  for (size_t i : live) {
    int64_t m =
        PlanCost::microBatchesWithin(hi, ts[i].bottleneck, ts[i].depth());
    uses.push_back({i, m, m > 0 ? counts[i] : 0});
    total += m * counts[i];
  }
  auto finish = [&](const Use &u) {
    return double(u.m + ts[u.i].depth() - 1) * ts[u.i].bottleneck;
  };
  std::stable_sort(uses.begin(), uses.end(), [&](const Use &a, const Use &b) {
    return finish(a) > finish(b);
  });
  int64_t surplus = total - M;
  for (Use &u : uses) {
    if (surplus <= 0 || u.m == 0)
      continue;
    int64_t n = counts[u.i];
    int64_t r = std::min(surplus, u.m * n);
    u.used -= std::max<int64_t>(0, r - n * (u.m - 1));
    if (r >= u.m * n)
      u.m = 0;
    surplus -= r;
  }
  int64_t pipelines = 0, params = 0;
  double memGBs = 1e30, makespan = 0;
  std::vector<int64_t> gpus(p.devices.size(), 0);
  bool mixed = false;
  for (const Use &u : uses) {
    if (u.used <= 0)
      continue;
    const Template &t = ts[u.i];
    makespan = std::max(makespan, double(std::max<int64_t>(u.m, 1) +
                                         t.depth() - 1) *
                                      t.bottleneck);
    pipelines += u.used;
    params = std::max(params, t.paramsPerRank);
    mixed |= t.mixed;
    for (size_t d = 0; d < p.devices.size(); ++d)
      if (t.gpus[d]) {
        gpus[d] += u.used * t.gpus[d];
        memGBs = std::min(memGBs, p.devices[d].memoryGBs);
      }
  }
  // The all-reduce crosses the network unless every used GPU fits on one
  // node of its type.
  int64_t nodes = 0;
  int single = -1;
  for (size_t d = 0; d < p.devices.size(); ++d)
    if (gpus[d]) {
      nodes += (gpus[d] + groups.maxPerNode[d] - 1) / groups.maxPerNode[d];
      single = groups.nodes[d].front();
      q.gpus += gpus[d];
    }
  bool cross = mixed || nodes > 1;
  q.seconds = makespan + cost.allReduceSeconds(pipelines, params, cross, single) +
              cost.optimizerSeconds(params, memGBs);
  return q;
}

/// As many pipelines of the primary template as `free` GPUs allow (at most
/// the cap), and without a cap the rest filled with the best-rated
/// templates of the same type that fit what is left.
void FastSearch::fill(const std::vector<Template> &ts,
                      const std::vector<size_t> &ofType, Fill f,
                      std::vector<int64_t> free,
                      std::vector<int64_t> &counts) const {
  // Homogeneous templates of one type: only that type's free GPUs count.
  size_t d = size_t(ts[f.primary].stageDevice[0]);
  auto fits = [&](size_t i) { return free[d] / ts[i].totalGpus(); };
  auto take = [&](size_t i, int64_t n) {
    counts[i] += n;
    free[d] -= n * ts[i].totalGpus();
  };
  take(f.primary, std::min(f.cap, fits(f.primary)));
  for (int round = 0; round < 2 && f.cap == INT64_MAX; ++round) {
    size_t best = SIZE_MAX;
    double rate = 0;
    for (size_t i : ofType) {
      int64_t n = fits(i);
      if (n > 0 && double(n) / ts[i].bottleneck > rate) {
        rate = double(n) / ts[i].bottleneck;
        best = i;
      }
    }
    if (best == SIZE_MAX)
      break;
    take(best, fits(best));
  }
}

std::vector<FastSearch::Scored> FastSearch::assign(const std::vector<Template> &ts,
                                                   int64_t mb) {
  int K = int(p.devices.size());
  std::vector<std::vector<size_t>> ofType(K);
  std::vector<size_t> mixed;
  for (size_t i = 0; i < ts.size(); ++i)
    (ts[i].mixed ? mixed : ofType[ts[i].stageDevice[0]]).push_back(i);
  // The descent's mixed moves cost O(fills) each: beyond 16 mixed
  // templates keep the fastest per GPU (micro-batches per second per GPU).
  if (mixed.size() > 16) {
    std::stable_sort(mixed.begin(), mixed.end(), [&](size_t a, size_t b) {
      return ts[a].bottleneck * double(ts[a].totalGpus()) <
             ts[b].bottleneck * double(ts[b].totalGpus());
    });
    mixed.resize(16);
    std::sort(mixed.begin(), mixed.end());
  }

  // Per type, its fills: each homogeneous template as many times as the
  // type's GPUs allow (the rest filled by others), or only as many as one
  // node holds (the all-reduce stays off the network), or once.
  std::vector<std::vector<Fill>> fills(K);
  for (int d = 0; d < K; ++d)
    for (size_t i : ofType[d]) {
      int64_t all = groups.gpus[d] / ts[i].totalGpus();
      int64_t node = groups.maxPerNode[d] / ts[i].totalGpus();
      fills[d].push_back({i, INT64_MAX});
      if (node >= 1 && node < all)
        fills[d].push_back({i, node});
      if (std::min(node, all) > 1)
        fills[d].push_back({i, 1});
    }
  // The state: a fill per type (SIZE_MAX: none), a count per mixed
  // template; counts follow from it.
  std::vector<int64_t> mixedCount(mixed.size(), 0);
  auto counts = [&](const std::vector<size_t> &ch,
                    const std::vector<int64_t> &mc) {
    std::vector<int64_t> c(ts.size(), 0);
    std::vector<int64_t> free = groups.gpus;
    for (size_t k = 0; k < mixed.size(); ++k) {
      int64_t n = mc[k];
      for (int d = 0; d < K; ++d)
        if (ts[mixed[k]].gpus[d])
          n = std::min(n, free[d] / ts[mixed[k]].gpus[d]);
      c[mixed[k]] = n;
      for (int d = 0; d < K; ++d)
        free[d] -= n * ts[mixed[k]].gpus[d];
    }
    for (int d = 0; d < K; ++d)
      if (ch[d] != SIZE_MAX)
        fill(ts, ofType[d], fills[d][ch[d]], free, c);
    return c;
  };
  std::vector<Scored> seen; // the best distinct states, by quick score
  auto better = [](const Quick &a, const Quick &b) {
    if (a.seconds < b.seconds * (1 - 1e-12))
      return true;
    return a.seconds <= b.seconds * (1 + 1e-12) && a.gpus > b.gpus;
  };
  auto record = [&](std::vector<int64_t> c) {
    Quick q = quick(ts, c, mb);
    if (q.gpus == 0)
      return q;
    bool dup = llvm::any_of(seen, [&](const Scored &s) { return s.counts == c; });
    if (!dup) {
      seen.push_back({q, std::move(c)});
      std::stable_sort(seen.begin(), seen.end(),
                       [&](const Scored &a, const Scored &b) {
                         return better(a.quick, b.quick);
                       });
      // The best few go to exact scoring; more where plans are cheap to
      // place and score.
      if (seen.size() > (p.totalGpus() <= 16 ? 48u : 8u))
        seen.pop_back();
    }
    return q;
  };
  auto evaluate = [&](const std::vector<size_t> &ch,
                      const std::vector<int64_t> &mc) {
    return record(counts(ch, mc));
  };
  // Per type, the best fill given the rest of the state.
  auto repick = [&](int d, std::vector<size_t> &ch,
                    const std::vector<int64_t> &mc, Quick &cur) {
    bool changed = false;
    for (size_t o = 0; o <= fills[d].size(); ++o) {
      size_t opt = o == fills[d].size() ? SIZE_MAX : o;
      if (opt == ch[d])
        continue;
      std::vector<size_t> next = ch;
      next[d] = opt;
      Quick q = evaluate(next, mc);
      if (q.gpus && (cur.gpus == 0 || better(q, cur))) {
        cur = q;
        ch = next;
        changed = true;
      }
    }
    return changed;
  };
  // Coordinate descent from a start: per type its best fill; per mixed
  // template a count, the two types it uses re-picked around it (a move
  // that takes their GPUs must let them change shape to pay off).
  auto descend = [&](std::vector<size_t> ch, std::vector<int64_t> mc) {
    Quick cur = evaluate(ch, mc);
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      for (int d = 0; d < K; ++d)
        changed |= repick(d, ch, mc, cur);
      for (size_t k = 0; k < mixed.size(); ++k) {
        int64_t most = INT64_MAX;
        for (int d = 0; d < K; ++d)
          if (ts[mixed[k]].gpus[d])
            most = std::min(most, groups.gpus[d] / ts[mixed[k]].gpus[d]);
        std::vector<int64_t> tries = {0, 1, most};
        for (int64_t n : tries) {
          if (n == mc[k])
            continue;
          std::vector<int64_t> nextMc = mc;
          nextMc[k] = n;
          std::vector<size_t> nextCh = ch;
          Quick q = evaluate(nextCh, nextMc);
          for (int d = 0; d < K; ++d)
            if (ts[mixed[k]].gpus[d])
              repick(d, nextCh, nextMc, q);
          if (q.gpus && (cur.gpus == 0 || better(q, cur))) {
            cur = q;
            ch = nextCh;
            mc = nextMc;
            changed = true;
          }
        }
      }
      if (!changed)
        break;
    }
  };
  // Starts: the best single type; every type at its own best fill; every
  // the best mixed template at its most.
  std::vector<size_t> alone(K, SIZE_MAX), single(K, SIZE_MAX);
  Quick bestSingle;
  for (int d = 0; d < K; ++d) {
    Quick bd;
    for (size_t i = 0; i < fills[d].size(); ++i) {
      std::vector<size_t> ch(K, SIZE_MAX);
      ch[d] = i;
      Quick q = evaluate(ch, mixedCount);
      if (q.gpus && (alone[d] == SIZE_MAX || better(q, bd))) {
        bd = q;
        alone[d] = i;
      }
      if (q.gpus && (bestSingle.gpus == 0 || better(q, bestSingle))) {
        bestSingle = q;
        single = ch;
      }
    }
  }
  descend(single, mixedCount);
  descend(alone, mixedCount);
  Quick bestMixed;
  std::vector<int64_t> mixedStart(mixed.size(), 0);
  for (size_t k = 0; k < mixed.size(); ++k) {
    std::vector<int64_t> mc(mixed.size(), 0);
    mc[k] = INT64_MAX;
    Quick q = evaluate(std::vector<size_t>(K, SIZE_MAX), mc);
    if (q.gpus && (bestMixed.gpus == 0 || better(q, bestMixed))) {
      bestMixed = q;
      mixedStart = mc;
    }
  }
  if (bestMixed.gpus)
    descend(std::vector<size_t>(K, SIZE_MAX), mixedStart);
  // On small clusters, also pipelines one at a time: each step adds the
  // pipeline of any template that shortens the step most. It finds
  // combinations of several mixed templates that share a type, which
  // single-coordinate moves cannot reach; one step costs O(templates^2),
  // so it runs where the pipelines are few.
  // On small clusters, also pipelines one at a time: from each template
  // as the first pipeline, each step adds the pipeline that shortens the
  // step most. It finds combinations of several mixed templates sharing a
  // type, which single-coordinate moves cannot reach; it costs
  // O(templates^2) per step, so it runs only on clusters of <= 16 GPUs.
  if (p.totalGpus() <= 16)
    for (size_t first = 0; first < ts.size(); ++first) {
      std::vector<int64_t> c(ts.size(), 0), free = groups.gpus;
      auto fits = [&](size_t i) {
        for (int d = 0; d < K; ++d)
          if (ts[i].gpus[d] > free[d])
            return false;
        return true;
      };
      auto add = [&](size_t i) {
        ++c[i];
        for (int d = 0; d < K; ++d)
          free[d] -= ts[i].gpus[d];
      };
      if (!fits(first))
        continue;
      add(first);
      Quick cur = record(c);
      while (true) {
        size_t pick = SIZE_MAX;
        Quick bestStep = cur;
        for (size_t i = 0; i < ts.size(); ++i) {
          if (!fits(i))
            continue;
          ++c[i];
          Quick q = record(c);
          --c[i];
          if (q.gpus && better(q, bestStep)) {
            bestStep = q;
            pick = i;
          }
        }
        if (pick == SIZE_MAX)
          break;
        add(pick);
        cur = bestStep;
      }
    }
  return seen;
}

std::string FastSearch::describe(const std::vector<Template> &ts,
                                 const std::vector<int64_t> &counts,
                                 int64_t mb) const {
  std::string s = llvm::formatv("micro-batch {0}:", mb).str();
  for (size_t i = 0; i < ts.size(); ++i)
    if (counts[i])
      s += llvm::formatv(" {0}x{1}", counts[i], ts[i].describe(p)).str();
  return s;
}

/// Keeps `plan` among the `keep` fastest of `kept` (sorted, one per
/// description: the search scores some shapes more than once).
static void keepCandidate(std::vector<PartitionPlan> &kept, size_t keep,
                          const PartitionPlan &plan) {
  auto same = llvm::find_if(kept, [&](const PartitionPlan &k) {
    return k.description == plan.description;
  });
  if (same != kept.end()) {
    if (same->stepSeconds() <= plan.stepSeconds())
      return;
    kept.erase(same);
  }
  auto at = llvm::find_if(kept, [&](const PartitionPlan &k) {
    return plan.stepSeconds() < k.stepSeconds();
  });
  kept.insert(at, plan);
  if (kept.size() > keep)
    kept.pop_back();
}

llvm::Expected<PartitionPlan> FastSearch::run(const SolveOptions &options) {
  if (llvm::Error e = p.check())
    return std::move(e);
  mixedPipelines = options.mixedPipelines;
  std::optional<PartitionPlan> best;
  auto better = [](const PartitionPlan &a, const PartitionPlan &b) {
    if (a.stepSeconds() < b.stepSeconds() * (1 - 1e-9))
      return true;
    return a.stepSeconds() <= b.stepSeconds() * (1 + 1e-9) &&
           gpusUsed(a) > gpusUsed(b);
  };
  std::vector<std::pair<std::string, double>> ranked;
  for (int64_t mb : usableMicroBatches(p)) {
    std::vector<Template> &ts = templates[mb];
    buildTemplates(mb, ts);
    for (const Scored &s : assign(ts, mb)) {
      std::vector<std::pair<const Template *, int64_t>> uses;
      for (size_t i = 0; i < ts.size(); ++i)
        if (s.counts[i])
          uses.push_back({&ts[i], s.counts[i]});
      auto plan = assemble(cost, groups, uses, mb);
      if (!plan) {
        llvm::consumeError(plan.takeError());
        continue;
      }
      plan->description = describe(ts, s.counts, mb);
      ranked.push_back({plan->description, plan->stepSeconds()});
      if (options.candidates)
        keepCandidate(*options.candidates, options.keepCandidates, *plan);
      if (!best || better(*plan, *best))
        best = std::move(*plan);
    }
  }
  if (!best)
    return noPlanError();
  useIdleGpus(*best);
  if (std::vector<PartitionPlan> *kept = options.candidates) {
    // The chosen one first, as returned (idle GPUs used; among plans of
    // equal time it is the one using more GPUs).
    llvm::erase_if(*kept, [&](const PartitionPlan &c) {
      return c.description == best->description;
    });
    kept->insert(kept->begin(), *best);
    if (kept->size() > options.keepCandidates)
      kept->resize(options.keepCandidates);
  }
  if (options.explain) {
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto &a, const auto &b) { return a.second < b.second; });
    if (llvm::none_of(ranked, [&](const auto &r) {
          return r.first == best->description;
        }))
      ranked.insert(ranked.begin(), {best->description, best->stepSeconds()});
    *options.explain = std::move(ranked);
  }
  return *best;
}

int64_t gpusUsed(const PartitionPlan &plan) {
  int64_t n = 0;
  for (const Pipeline &q : plan.pipelines)
    for (const Stage &s : q.stages)
      n += s.tp();
  return n;
}

llvm::Error FastSearch::noPlanError() const {
  std::string need;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    if (!p.devices[d].unusable.empty() || !groups.gpus[d])
      continue;
    if (smallestNeed[d] > 0 && smallestNeed[d] != INT64_MAX)
      need += llvm::formatv(" {0}: needs {1:f1} GiB per GPU, has {2:f1};",
                            p.devices[d].name,
                            double(smallestNeed[d]) / double(1ll << 30),
                            double(p.devices[d].memoryBytes) /
                                double(1ll << 30))
                  .str();
  }
  return llvm::createStringError(
      std::errc::not_enough_memory,
      "the cluster cannot hold the model at any layout tried (TP up to a "
      "node, pipelines up to one layer per stage):%s add GPUs or lower the "
      "batch or sequence",
      need.c_str());
}

llvm::Expected<PartitionPlan> solveFast(const PlanProblem &problem,
                                        const SolveOptions &options) {
  return FastSearch(problem).run(options);
}

} // namespace frenzy::plan
