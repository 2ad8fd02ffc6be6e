//===- Partitioner.cpp - asymmetric DP/PP/TP over a mixed cluster ---------===//
//
// Search space, per GPU type: leave it out, or a TP degree t (dividing every
// node's count of that type, so a stage stays on one node) and a pipeline
// depth d near the smallest that fits (d_min .. d_min + 2, 2 d_min); the
// type's GPUs form floor(groups / d) identical pipelines. Within a pipeline
// the contiguous layer split minimising the bottleneck stage time is found
// by binary search on that time with greedy packing (exact for contiguous
// splits), every stage memory-checked under 1F1B. Pipelines of all chosen
// types then share the micro-batches by water-filling so they finish
// together. Micro-batch sizes 1, 2, 4, 8 that divide the global batch.
// Everything iterates in a fixed order, so the same input gives the same
// plan.
//
//===----------------------------------------------------------------------===//
#include "Search.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <deque>
#include <map>
#include <set>

using namespace frenzy;

namespace frenzy::planning {

std::optional<Template> Search::shape(std::vector<TypeGroup> &groups,
                                      std::vector<int> stageType, int64_t tp,
                                      int64_t pipelines, bool spans,
                                      int64_t mb) const {
  int64_t L = cost.numLayers();
  int64_t depth = int64_t(stageType.size());
  if (depth == 0 || pipelines == 0 || depth > std::max<int64_t>(1, L))
    return std::nullopt;
  auto type = [&](int64_t s) -> TypeGroup & { return groups[stageType[s]]; };
  // Greedy packing under a bottleneck T: each stage takes layers while it
  // stays under T and in memory; exact for contiguous splits.
  auto pack = [&](double T, Template &t) {
    t.ranges.clear();
    int64_t l = 0;
    for (int64_t s = 0; s < depth; ++s) {
      bool last = s == depth - 1;
      const TypeGroup &g = type(s);
      int64_t first = l, end = last ? L - 1 : first - 1;
      // Fits within T and memory, with full recomputation where the
      // options allow it and only it fits.
      auto fits = [&](int64_t e, bool head) {
        Recompute r = stageMode(g, tp, first, e, s, depth, mb);
        return stageSeconds(g, tp, first, e, s == 0, head, mb, spans, nullptr,
                            r) <= T &&
               stagePeak(g, tp, first, e, s, depth, mb, r) <=
                   g.gpu->memoryBytes;
      };
      if (!last)
        while (end + 1 < L && fits(end + 1, false))
          ++end;
      if (!fits(end, last))
        return false;
      t.ranges.push_back({first, end});
      l = end + 1;
    }
    return l >= L;
  };
  Template t;
  t.tp = tp;
  t.depth = depth;
  t.pipelines = pipelines;
  t.stageType = stageType;
  t.spansNodes = spans;
  double hi = 1;
  for (int64_t s = 0; s < depth; ++s)
    hi = std::max(hi, 2 * stageSeconds(type(s), tp, 0, L - 1, true, true, mb,
                                       spans, nullptr, Recompute::Full) +
                          1);
  if (!pack(hi, t)) {
    // Does not fit at any split: remember what an even split would need.
    for (int64_t s = 0; s < depth; ++s) {
      int64_t a = s * L / depth, b = (s + 1) * L / depth - 1;
      TypeGroup &g = type(s);
      g.smallestNeed = std::min(
          g.smallestNeed,
          stagePeak(g, tp, a, b, s, depth, mb, stageMode(g, tp, a, b, s, depth, mb)));
    }
    return std::nullopt;
  }
  double lo = 0;
  for (int i = 0; i < 48; ++i) {
    double mid = 0.5 * (lo + hi);
    Template probe = t;
    if (pack(mid, probe))
      hi = mid;
    else
      lo = mid;
  }
  pack(hi, t);
  for (int64_t s = 0; s < depth; ++s) {
    auto [a, b] = t.ranges[s];
    Recompute r = stageMode(type(s), tp, a, b, s, depth, mb);
    t.stageRecompute.push_back(r);
    t.stageSeconds.push_back(stageSeconds(type(s), tp, a, b, s == 0,
                                          s == depth - 1, mb, spans, nullptr,
                                          r));
    t.stagePeak.push_back(stagePeak(type(s), tp, a, b, s, depth, mb, r));
    t.bottleneck = std::max(t.bottleneck, t.stageSeconds.back());
    int64_t params = (s == 0 ? cost.blockParams(-1) : 0) +
                     (s == depth - 1 ? cost.blockParams(INT64_MAX) : 0);
    for (int64_t l = a; l <= b; ++l)
      params += cost.blockParams(l);
    t.paramsPerRank = std::max(t.paramsPerRank, params / tp);
  }
  return t;
}

llvm::Expected<PartitionPlan> Search::run(std::vector<Alternative> *explain) {
  std::vector<TypeGroup> groups;
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const ClusterNode &n = cluster.nodes[i];
    const GpuType *g = cluster.gpuType(n.gpu);
    if (!g)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "node '%s': unknown GPU type '%s'; known types: %s (or describe it "
          "under gpu_types:)",
          n.name.c_str(), n.gpu.c_str(), gpuTypeNames().c_str());
    auto it = llvm::find_if(groups,
                            [&](const TypeGroup &t) { return t.gpu == g; });
    if (it == groups.end()) {
      groups.push_back({g});
      it = groups.end() - 1;
    }
    it->nodes.push_back(int(i));
    it->minPerNode = std::min(it->minPerNode, n.count);
    it->maxPerNode = std::max(it->maxPerNode, n.count);
  }
  // Stage groups are drawn node by node: rack by rack keeps a pipeline's
  // consecutive stages (and a type's pipelines) within a rack.
  for (TypeGroup &g : groups)
    g.nodes = topology.placementOrder(g.nodes);
  if (cost.precision() == Precision::BF16Mixed)
    for (TypeGroup &g : groups)
      if (!g.gpu->bf16)
        g.unsupported = true;

  // Candidates are ranked by quickSeconds; the best few are then assembled
  // and scored exactly (which pipelines get work, and so which nodes the
  // gradient all-reduce crosses, is only known after water-filling).
  struct Candidate {
    double seconds;
    std::vector<const Template *> chosen;
    int64_t mb;
    std::string desc;
  };
  std::vector<Candidate> candidates;
  std::deque<Template> keep; // templates the candidates point to
  std::optional<PartitionPlan> best;
  double bestSeconds = 0;
  for (int64_t mb : {1, 2, 4, 8}) {
    if (opts.globalBatch % mb)
      continue;
    // Candidate shapes per type: the smallest depth that fits and a few
    // deeper ones (more stages only add bubbles beyond that).
    std::vector<std::vector<Template>> shapes(groups.size());
    for (size_t k = 0; k < groups.size(); ++k) {
      TypeGroup &g = groups[k];
      if (g.unsupported)
        continue;
      for (int64_t tp : {1, 2, 4, 8}) {
        bool divides = true;
        for (int n : g.nodes)
          divides &= cluster.nodes[n].count % tp == 0;
        if (!divides)
          continue;
        int64_t n = groupsOf(g, tp);
        auto homogeneous = [&](int64_t d) {
          // Optimistic about placement (the widest node): the exact
          // evaluation of the best candidates sees where pipelines land.
          return shape(groups, std::vector<int>(d, int(k)), tp, n / d,
                       d * tp > g.maxPerNode, mb);
        };
        std::optional<int64_t> dmin;
        for (int64_t d = 1; d <= std::min(n, std::max<int64_t>(1, cost.numLayers())) &&
                            !dmin;
             ++d)
          if (auto t = homogeneous(d)) {
            dmin = d;
            shapes[k].push_back(*t);
          }
        if (!dmin)
          continue;
        // Every deeper pipeline while that stays cheap (deeper pipelines
        // trade bubbles for fewer, faster stages); a few beyond the
        // shallowest when a type has many stage groups.
        std::set<int64_t> depths;
        int64_t deepest = std::min(n, std::max<int64_t>(1, cost.numLayers()));
        if (n <= 16)
          for (int64_t d = *dmin + 1; d <= deepest; ++d)
            depths.insert(d);
        else
          depths = {*dmin + 1, *dmin + 2, 2 * *dmin};
        for (int64_t d : depths)
          if (d <= deepest)
            if (auto t = homogeneous(d))
              shapes[k].push_back(*t);
      }
    }
    // Stable copies of the per-type shapes: candidates point at them.
    std::vector<std::vector<const Template *>> stable(groups.size());
    for (size_t k = 0; k < groups.size(); ++k)
      for (Template &t : shapes[k]) {
        keep.push_back(t);
        stable[k].push_back(&keep.back());
      }
    auto consider = [&](std::vector<const Template *> chosen,
                        const std::string &desc) {
      candidates.push_back(
          {quickSeconds(groups, chosen, mb), std::move(chosen), mb, desc});
    };
    // Every combination of one homogeneous shape (or nothing) per type.
    std::vector<size_t> pick(groups.size(), 0); // 0 = leave out
    while (true) {
      std::vector<const Template *> chosen;
      bool any = false;
      std::string desc = llvm::formatv("micro-batch {0}:", mb).str();
      for (size_t k = 0; k < groups.size(); ++k) {
        const Template *t = pick[k] ? stable[k][pick[k] - 1] : nullptr;
        chosen.push_back(t);
        any |= t && t->pipelines > 0;
        desc += " " + groups[k].gpu->name +
                (t ? llvm::formatv(" {0}x(tp {1}, {2} stages)", t->pipelines,
                                   t->tp, t->depth)
                         .str()
                   : std::string(" unused"));
      }
      if (any)
        consider(chosen, desc);
      size_t k = 0;
      while (k < groups.size() && ++pick[k] > shapes[k].size())
        pick[k++] = 0;
      if (k == groups.size())
        break;
    }
    // Mixed pipelines, for models no single type can hold: P identical
    // pipelines, each with an equal share of every type's stage groups,
    // larger-memory types first (stage 0 holds the most micro-batches).
    std::vector<int> order;
    for (size_t k = 0; k < groups.size(); ++k)
      if (!groups[k].unsupported)
        order.push_back(int(k));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return groups[a].gpu->memoryBytes > groups[b].gpu->memoryBytes;
    });
    if (order.size() < 2)
      continue;
    for (int64_t tp : {1, 2, 4, 8}) {
      bool divides = true;
      int64_t most = 0;
      for (int k : order)
        for (int n : groups[k].nodes)
          divides &= cluster.nodes[n].count % tp == 0;
      if (!divides)
        continue;
      for (int k : order)
        most = std::max(most, groupsOf(groups[k], tp));
      int found = 0;
      for (int64_t P = 1; P <= most && found < 3; P = P < 4 ? P + 1 : P * 2) {
        std::vector<int> stages;
        std::string desc =
            llvm::formatv("micro-batch {0}: {1}x mixed (tp {2}:", mb, P, tp)
                .str();
        for (int k : order) {
          int64_t share = groupsOf(groups[k], tp) / P;
          stages.insert(stages.end(), share, k);
          if (share)
            desc += llvm::formatv(" {0} {1}", share, groups[k].gpu->name).str();
        }
        desc += ")";
        if (int64_t(stages.size()) > std::max<int64_t>(1, cost.numLayers()))
          continue;
        if (auto t = shape(groups, stages, tp, P, true, mb)) {
          ++found;
          keep.push_back(*t);
          consider({&keep.back()}, desc);
        }
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate &a, const Candidate &b) {
                     return a.seconds < b.seconds;
                   });
  for (size_t i = 0; i < candidates.size() && i < 256; ++i) {
    PartitionPlan plan = assemble(groups, candidates[i].chosen, candidates[i].mb);
    plan.description = candidates[i].desc;
    if (!best || plan.stepSeconds() < bestSeconds) {
      bestSeconds = plan.stepSeconds();
      best = std::move(plan);
    }
  }
  if (explain)
    for (const Candidate &c : candidates)
      explain->push_back({c.desc, c.seconds, ""});
  if (!best) {
    std::string need;
    int64_t capacity = 0;
    for (const TypeGroup &g : groups) {
      capacity = std::max(capacity, g.gpu->memoryBytes);
      if (g.smallestNeed > 0 && g.smallestNeed != INT64_MAX)
        need += llvm::formatv(" {0}: needs {1:f1} GiB per GPU, has {2:f1};",
                              g.gpu->name,
                              double(g.smallestNeed) / double(1ll << 30),
                              double(g.gpu->memoryBytes) / double(1ll << 30))
                    .str();
    }
    return llvm::createStringError(
        std::errc::not_enough_memory,
        "the cluster cannot hold the model at any layout tried (TP up to a "
        "node, pipelines up to one layer per stage):%s add GPUs or lower the "
        "batch or sequence",
        need.c_str());
  }
  if (explain) {
    std::stable_sort(explain->begin(), explain->end(),
                     [](const Alternative &a, const Alternative &b) {
                       return a.stepSeconds < b.stepSeconds;
                     });
    for (Alternative &a : *explain)
      a.why = a.description == best->description
                  ? "chosen"
                  : llvm::formatv("{0:f1}% slower",
                                  100.0 * (a.stepSeconds / bestSeconds - 1.0))
                        .str();
  }
  return *best;
}


} // namespace frenzy::planning

using namespace frenzy::planning;

llvm::Expected<PartitionPlan>
frenzy::partition(const CostModel &cost, const MemoryModel &memory,
                  const ClusterSpec &cluster, const PartitionOptions &options,
                  std::vector<Alternative> *explain) {
  return Search(cost, memory, cluster, options).run(explain);
}
