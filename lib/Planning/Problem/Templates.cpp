//===- Templates.cpp - pipeline shapes and their placement ----------------===//
#include "Templates.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace frenzy::plan {

DeviceGroups::DeviceGroups(const PlanProblem &p)
    : nodes(p.devices.size()), gpus(p.devices.size(), 0),
      maxPerNode(p.devices.size(), 0), tps(p.devices.size()) {
  // Nodes rack by rack: stage groups drawn in this order keep a pipeline's
  // consecutive stages (and a type's pipelines) within a rack.
  std::vector<int> all(p.nodes.size());
  for (size_t n = 0; n < all.size(); ++n)
    all[n] = int(n);
  for (int n : problemTopology(p).placementOrder(all)) {
    int d = p.nodes[n].device;
    nodes[d].push_back(n);
    gpus[d] += p.nodes[n].gpus;
    maxPerNode[d] = std::max(maxPerNode[d], p.nodes[n].gpus);
  }
  for (size_t d = 0; d < p.devices.size(); ++d)
    for (int64_t tp : p.tpDegrees) {
      bool divides = !nodes[d].empty();
      for (int n : nodes[d])
        divides &= p.nodes[n].gpus % tp == 0;
      if (divides)
        tps[d].push_back(tp);
    }
}

int64_t DeviceGroups::groupsOf(int device, int64_t tp) const {
  // Every node's count is a multiple of tp (tps[] only holds such).
  return gpus[device] / tp;
}

std::string Template::describe(const PlanProblem &p) const {
  std::string s;
  for (size_t i = 0; i < stageDevice.size();) {
    size_t j = i;
    while (j < stageDevice.size() && stageDevice[j] == stageDevice[i])
      ++j;
    s += llvm::formatv("{0}{1} {2}", s.empty() ? "" : " + ", j - i,
                       p.devices[stageDevice[i]].name)
             .str();
    i = j;
  }
  return llvm::formatv("[{0}, tp {1}]", s, tp).str();
}

std::optional<Template> shapeTemplate(const PlanCost &cost,
                                      const DeviceGroups &groups,
                                      std::vector<int> stageDevice,
                                      int64_t tp, bool spans, int64_t mb,
                                      std::vector<int64_t> *smallestNeed) {
  const PlanProblem &p = cost.problem();
  int64_t L = cost.layers();
  int64_t depth = int64_t(stageDevice.size());
  if (depth == 0 || depth > std::max<int64_t>(1, L))
    return std::nullopt;
  auto node = [&](int64_t s) { return groups.nodes[stageDevice[s]].front(); };
  // Full recomputation where the problem allows it and only it fits.
  auto full = [&](int64_t s, int64_t a, int64_t b) {
    return cost.useFull(stageDevice[s], tp, a, b, s == 0, s == depth - 1,
                        depth - s, mb);
  };
  auto seconds = [&](int64_t s, int64_t a, int64_t b) {
    return cost.stageSeconds(stageDevice[s], node(s), tp, a, b, s == 0,
                             s == depth - 1, mb, spans, nullptr,
                             full(s, a, b));
  };
  auto peak = [&](int64_t s, int64_t a, int64_t b) {
    return cost.stagePeak(stageDevice[s], tp, a, b, s == 0, s == depth - 1,
                          depth - s, mb, full(s, a, b));
  };
  auto capacity = [&](int64_t s) {
    return p.devices[stageDevice[s]].memoryBytes;
  };
  // Greedy packing under a bottleneck T: each stage takes layers while it
  // stays under T and in memory; exact for contiguous splits.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  auto pack = [&](double T) {
    ranges.clear();
    int64_t l = 0;
    for (int64_t s = 0; s < depth; ++s) {
      bool last = s == depth - 1;
      int64_t first = l, end = last ? L - 1 : first - 1;
      if (!last)
        // Leave a layer for each later stage.
        while (end + 1 < L - (depth - 1 - s) &&
               seconds(s, first, end + 1) <= T &&
               peak(s, first, end + 1) <= capacity(s))
          ++end;
      // Every stage runs at least one layer (a model with layers).
      if ((L > 0 && end < first) || seconds(s, first, end) > T ||
          peak(s, first, end) > capacity(s))
        return false;
      ranges.push_back({first, end});
      l = end + 1;
    }
    return l >= L;
  };
  double hi = 1;
  for (int64_t s = 0; s < depth; ++s)
    hi = std::max(hi, 2 * cost.stageSeconds(stageDevice[s], node(s), tp, 0,
                                            L - 1, true, true, mb, spans,
                                            nullptr, p.fullRecompute > 0) +
                          1);
  if (!pack(hi)) {
    if (smallestNeed)
      for (int64_t s = 0; s < depth; ++s) {
        int64_t a = s * L / depth, b = (s + 1) * L / depth - 1;
        int64_t &need = (*smallestNeed)[stageDevice[s]];
        need = std::min(need, peak(s, a, b));
      }
    return std::nullopt;
  }
  double lo = 0;
  // 2^-32 of the start: far below any cost difference.
  for (int i = 0; i < 32; ++i) {
    double mid = 0.5 * (lo + hi);
    (pack(mid) ? hi : lo) = mid;
  }
  pack(hi);
  Template t;
  t.stageDevice = stageDevice;
  t.tp = tp;
  t.spans = spans;
  t.ranges = ranges;
  t.gpus.assign(p.devices.size(), 0);
  for (int64_t s = 0; s < depth; ++s) {
    auto [a, b] = ranges[s];
    t.stageSeconds.push_back(seconds(s, a, b));
    t.stagePeak.push_back(peak(s, a, b));
    t.bottleneck = std::max(t.bottleneck, t.stageSeconds.back());
    t.paramsPerRank = std::max(
        t.paramsPerRank, cost.stageParams(tp, a, b, s == 0, s == depth - 1));
    t.gpus[t.stageDevice[s]] += tp;
    t.mixed |= t.stageDevice[s] != t.stageDevice[0];
  }
  return t;
}

llvm::Expected<PartitionPlan>
assemble(const PlanCost &cost, const DeviceGroups &groups,
         const std::vector<std::pair<const Template *, int64_t>> &uses,
         int64_t mb) {
  const PlanProblem &p = cost.problem();
  // Larger TP first keeps every node's free count a multiple of the
  // smaller degrees, so first fit never strands GPUs.
  std::vector<std::pair<const Template *, int64_t>> order;
  for (const auto &u : uses)
    if (u.first && u.second > 0)
      order.push_back(u);
  std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return a.first->tp > b.first->tp;
  });
  std::vector<int64_t> used(p.nodes.size(), 0);
  std::vector<size_t> cursor(p.devices.size(), 0);
  PartitionPlan plan;
  plan.microBatch = mb;
  for (const auto &[t, count] : order)
    for (int64_t i = 0; i < count; ++i) {
      Pipeline pipe;
      for (int64_t s = 0; s < t->depth(); ++s) {
        int d = t->stageDevice[s];
        const std::vector<int> &nodes = groups.nodes[d];
        size_t &c = cursor[d];
        while (c < nodes.size() && p.nodes[nodes[c]].gpus - used[nodes[c]] < t->tp)
          ++c;
        if (c == nodes.size())
          return llvm::createStringError(std::errc::invalid_argument,
                                         "not enough %s GPUs for the pipelines",
                                         p.devices[d].name.c_str());
        Stage st;
        st.node = nodes[c];
        for (int64_t g = 0; g < t->tp; ++g)
          st.devices.push_back(used[st.node] + g);
        used[st.node] += t->tp;
        st.firstLayer = t->ranges[s].first;
        st.lastLayer = t->ranges[s].second;
        st.embed = s == 0;
        st.head = s == t->depth() - 1;
        pipe.stages.push_back(std::move(st));
      }
      plan.pipelines.push_back(std::move(pipe));
    }
  return cost.score(std::move(plan));
}

} // namespace frenzy::plan
