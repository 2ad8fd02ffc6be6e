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
#include "frenzy/Planning/Partitioner.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <deque>
#include <map>
#include <set>

using namespace frenzy;

namespace {

struct TypeGroup {
  const GpuType *gpu = nullptr;
  std::vector<int> nodes; // cluster node indices, in file order
  int64_t minPerNode = INT64_MAX, maxPerNode = 0;
  int64_t smallestNeed = INT64_MAX; // for the error when nothing fits
};

/// One pipeline shape of a type: stages (layer ranges), bottleneck time.
struct Template {
  int64_t tp = 1, depth = 1, pipelines = 0;
  std::vector<int> stageType; // index into the type groups, per stage
  bool spansNodes = false;
  std::vector<std::pair<int64_t, int64_t>> ranges; // per stage
  std::vector<double> stageSeconds;
  std::vector<int64_t> stagePeak;
  double bottleneck = 0;
  int64_t paramsPerRank = 0; // the largest stage's, after TP
};

class Search {
public:
  Search(const CostModel &c, const MemoryModel &m, const ClusterSpec &cl,
         const PartitionOptions &o)
      : cost(c), memory(m), cluster(cl), opts(o) {}

  llvm::Expected<PartitionPlan> run(std::vector<Alternative> *explain);

private:
  double stageSeconds(const TypeGroup &g, int64_t tp, int64_t first,
                      int64_t last, bool embed, bool head, int64_t mb,
                      bool spansNodes) const;
  int64_t stagePeak(const TypeGroup &g, int64_t tp, int64_t first,
                    int64_t last, int64_t stage, int64_t depth,
                    int64_t mb) const;
  std::optional<Template> shape(std::vector<TypeGroup> &groups,
                                std::vector<int> stageType, int64_t tp,
                                int64_t pipelines, bool spans,
                                int64_t mb) const;
  PartitionPlan assemble(const std::vector<TypeGroup> &groups,
                         const std::vector<const Template *> &chosen,
                         int64_t mb) const;
  /// The step time assemble() would give, without building the stages:
  /// the search ranks hundreds of thousands of combinations this way.
  double quickSeconds(const std::vector<TypeGroup> &groups,
                      const std::vector<const Template *> &chosen,
                      int64_t mb) const;
  /// Water-filled batch shares, all-reduce and optimizer time of a plan
  /// whose stages have their seconds.
  void finish(PartitionPlan &plan) const;
  int64_t stageParams(const Stage &st) const;

public:
  /// Stage times, memory and the step time of a plan given as stages.
  llvm::Expected<PartitionPlan> evaluate(PartitionPlan plan) const;

private:
  /// Ring all-reduce of one rank's gradients between pipelines over the
  /// slowest link (the network when they span nodes).
  double allReduceSeconds(int64_t pipelines, int64_t params,
                          const std::set<int> &nodes) const;
  int64_t groupsOf(const TypeGroup &g, int64_t tp) const {
    int64_t n = 0;
    for (int node : g.nodes)
      n += cluster.nodes[node].count / tp;
    return n;
  }

  /// Prefix sums of the layers' seconds at micro-batch 1 on a GPU type:
  /// a stage's compute time in O(1) (times scale with the micro-batch).
  const std::vector<double> &layerPrefix(const GpuType &gpu) const {
    std::vector<double> &p = prefix[&gpu];
    if (p.empty()) {
      p.push_back(0);
      for (int64_t l = 0; l < std::max<int64_t>(1, cost.numLayers()); ++l)
        p.push_back(p.back() + cost.blockSeconds(l, gpu, 1));
    }
    return p;
  }

  const CostModel &cost;
  const MemoryModel &memory;
  const ClusterSpec &cluster;
  const PartitionOptions &opts;
  mutable std::map<const GpuType *, std::vector<double>> prefix;
};

double Search::stageSeconds(const TypeGroup &g, int64_t tp, int64_t first,
                            int64_t last, bool embed, bool head, int64_t mb,
                            bool spansNodes) const {
  const Efficiency &e = cost.efficiency();
  double s = 0;
  if (embed)
    s += cost.blockSeconds(-1, *g.gpu, mb);
  if (head)
    s += cost.blockSeconds(INT64_MAX, *g.gpu, mb);
  s += (layerPrefix(*g.gpu)[last + 1] - layerPrefix(*g.gpu)[first]) *
       double(mb);
  s /= double(tp);
  double hidden = double(cost.boundaryBytesPerSequence() * mb);
  const ClusterNode &node = cluster.nodes[g.nodes.front()];
  double intra = node.bandwidthGBs() * 1e9 * e.network;
  if (tp > 1) // Megatron: 2 all-reduces forward, 2 backward per layer
    s += double(last - first + 1) * 4.0 * 2.0 * double(tp - 1) /
         double(tp) * hidden / intra;
  // Activations forward and gradients backward at the stage boundary.
  double link = spansNodes ? cluster.network.bandwidthGbps / 8.0 * 1e9 * e.network
                           : intra;
  if (!head)
    s += 2.0 * (hidden / link + cluster.network.latencyUs * 1e-6);
  return s;
}

int64_t Search::stagePeak(const TypeGroup &g, int64_t tp, int64_t first,
                          int64_t last, int64_t stage, int64_t depth,
                          int64_t mb) const {
  StageQuery q;
  q.firstLayer = first;
  q.lastLayer = last;
  q.embed = stage == 0;
  q.head = stage == depth - 1;
  q.microBatch = mb;
  q.tp = tp;
  q.sequenceParallel = tp > 1;
  q.recompute = opts.recompute;
  q.inFlight = depth - stage;
  MemoryOverheads o;
  o.contextBytes = g.gpu->contextBytes;
  return memory.query(q, o).total();
}

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
      if (!last)
        while (end + 1 < L &&
               stageSeconds(g, tp, first, end + 1, s == 0, false, mb, spans) <=
                   T &&
               stagePeak(g, tp, first, end + 1, s, depth, mb) <=
                   g.gpu->memoryBytes)
          ++end;
      if (stageSeconds(g, tp, first, end, s == 0, last, mb, spans) > T ||
          stagePeak(g, tp, first, end, s, depth, mb) > g.gpu->memoryBytes)
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
                                       spans) + 1);
  if (!pack(hi, t)) {
    // Does not fit at any split: remember what an even split would need.
    for (int64_t s = 0; s < depth; ++s) {
      int64_t a = s * L / depth, b = (s + 1) * L / depth - 1;
      TypeGroup &g = type(s);
      g.smallestNeed =
          std::min(g.smallestNeed, stagePeak(g, tp, a, b, s, depth, mb));
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
    t.stageSeconds.push_back(
        stageSeconds(type(s), tp, a, b, s == 0, s == depth - 1, mb, spans));
    t.stagePeak.push_back(stagePeak(type(s), tp, a, b, s, depth, mb));
    t.bottleneck = std::max(t.bottleneck, t.stageSeconds.back());
    int64_t params = (s == 0 ? cost.blockParams(-1) : 0) +
                     (s == depth - 1 ? cost.blockParams(INT64_MAX) : 0);
    for (int64_t l = a; l <= b; ++l)
      params += cost.blockParams(l);
    t.paramsPerRank = std::max(t.paramsPerRank, params / tp);
  }
  return t;
}

int64_t Search::stageParams(const Stage &st) const {
  int64_t params = (st.embed ? cost.blockParams(-1) : 0) +
                   (st.head ? cost.blockParams(INT64_MAX) : 0);
  for (int64_t l = st.firstLayer; l <= st.lastLayer; ++l)
    params += cost.blockParams(l);
  return params / st.tp();
}

void Search::finish(PartitionPlan &plan) const {
  // Water-filling: the smallest finish time T at which the pipelines can
  // take all micro-batches, then trim the surplus from the latest.
  int64_t M = opts.globalBatch / plan.microBatch;
  auto count = [&](double T) {
    int64_t n = 0;
    for (const Pipeline &p : plan.pipelines)
      n += std::max<int64_t>(
          0, int64_t(std::floor(T / p.stageSeconds + 1e-9)) -
                 int64_t(p.stages.size()) + 1);
    return n;
  };
  double lo = 0, hi = 1;
  while (count(hi) < M)
    hi *= 2;
  for (int i = 0; i < 64; ++i) {
    double mid = 0.5 * (lo + hi);
    (count(mid) >= M ? hi : lo) = mid;
  }
  int64_t total = 0;
  for (Pipeline &p : plan.pipelines) {
    p.microBatches = std::max<int64_t>(
        0, int64_t(std::floor(hi / p.stageSeconds + 1e-9)) -
               int64_t(p.stages.size()) + 1);
    total += p.microBatches;
  }
  while (total > M) {
    Pipeline *latest = nullptr;
    for (Pipeline &p : plan.pipelines)
      if (p.microBatches > 0 && (!latest || p.seconds() >= latest->seconds()))
        latest = &p;
    --latest->microBatches;
    --total;
  }
  plan.pipelines.erase(
      std::remove_if(plan.pipelines.begin(), plan.pipelines.end(),
                     [](const Pipeline &p) { return p.microBatches == 0; }),
      plan.pipelines.end());
  plan.pipelineSeconds = 0;
  for (const Pipeline &p : plan.pipelines)
    plan.pipelineSeconds = std::max(plan.pipelineSeconds, p.seconds());

  // Gradient all-reduce between pipelines over the slowest link, and the
  // optimizer step (16 bytes of state per parameter read and written).
  int64_t params = 0;
  double memBw = 1e30;
  std::set<int> nodesUsed;
  for (const Pipeline &p : plan.pipelines)
    for (const Stage &st : p.stages) {
      nodesUsed.insert(st.node);
      params = std::max(params, stageParams(st));
      memBw = std::min(memBw,
                       cluster.gpuType(cluster.nodes[st.node].gpu)->memoryGBs *
                           1e9 * cost.efficiency().memory);
    }
  plan.allReduceSeconds =
      allReduceSeconds(int64_t(plan.pipelines.size()), params, nodesUsed);
  plan.optimizerSeconds = double(params) * 32.0 / memBw;
}

llvm::Expected<PartitionPlan> Search::evaluate(PartitionPlan plan) const {
  for (Pipeline &p : plan.pipelines) {
    std::set<int> nodes;
    for (const Stage &st : p.stages)
      nodes.insert(st.node);
    p.stageSeconds = 0;
    int64_t depth = int64_t(p.stages.size());
    for (int64_t s = 0; s < depth; ++s) {
      Stage &st = p.stages[s];
      TypeGroup g;
      g.gpu = cluster.gpuType(cluster.nodes[st.node].gpu);
      g.nodes = {st.node};
      g.minPerNode = cluster.nodes[st.node].count;
      st.seconds = stageSeconds(g, st.tp(), st.firstLayer, st.lastLayer,
                                st.embed, st.head, plan.microBatch,
                                nodes.size() > 1);
      st.peakBytes = stagePeak(g, st.tp(), st.firstLayer, st.lastLayer, s,
                               depth, plan.microBatch);
      if (st.peakBytes > g.gpu->memoryBytes)
        return llvm::createStringError(
            std::errc::not_enough_memory,
            "stage %lld needs %lld bytes, %s has %lld", (long long)s,
            (long long)st.peakBytes, g.gpu->name.c_str(),
            (long long)g.gpu->memoryBytes);
      p.stageSeconds = std::max(p.stageSeconds, st.seconds);
    }
  }
  finish(plan);
  return plan;
}

double Search::quickSeconds(const std::vector<TypeGroup> &groups,
                            const std::vector<const Template *> &chosen,
                            int64_t mb) const {
  // Water-filling over templates (their pipelines are identical): the
  // makespan is the smallest T at which they can take every micro-batch.
  int64_t M = opts.globalBatch / mb;
  auto count = [&](double T) {
    int64_t n = 0;
    for (const Template *t : chosen)
      if (t)
        n += t->pipelines *
             std::max<int64_t>(0, int64_t(std::floor(T / t->bottleneck + 1e-9)) -
                                      t->depth + 1);
    return n;
  };
  double lo = 0, hi = 1;
  while (count(hi) < M)
    hi *= 2;
  for (int i = 0; i < 64; ++i) {
    double mid = 0.5 * (lo + hi);
    (count(mid) >= M ? hi : lo) = mid;
  }
  // Per template: micro-batches per pipeline at the makespan, and how many
  // pipelines keep work after the surplus is trimmed (round-robin from the
  // latest-finishing template, as finish() does).
  struct Use {
    const Template *t;
    int64_t m, used;
  };
  std::vector<Use> uses;
  int64_t total = 0;
  for (const Template *t : chosen)
    if (t) {
      int64_t m = std::max<int64_t>(
          0, int64_t(std::floor(hi / t->bottleneck + 1e-9)) - t->depth + 1);
      uses.push_back({t, m, m > 0 ? t->pipelines : 0});
      total += m * t->pipelines;
    }
  std::stable_sort(uses.begin(), uses.end(), [](const Use &a, const Use &b) {
    return double(a.m + a.t->depth - 1) * a.t->bottleneck >
           double(b.m + b.t->depth - 1) * b.t->bottleneck;
  });
  int64_t surplus = total - M;
  for (Use &u : uses) {
    if (surplus <= 0 || u.m == 0)
      continue;
    int64_t r = std::min(surplus, u.m * u.t->pipelines);
    u.used -= std::max<int64_t>(0, r - u.t->pipelines * (u.m - 1));
    if (r >= u.m * u.t->pipelines)
      u.m = 0;
    surplus -= r;
  }
  int64_t pipelines = 0, params = 0;
  double memBw = 1e30, makespan = 0;
  std::set<int> nodes;
  for (const Use &u : uses) {
    if (u.used <= 0)
      continue;
    const Template *t = u.t;
    makespan = std::max(
        makespan,
        double(std::max<int64_t>(u.m, 1) + t->depth - 1) * t->bottleneck);
    pipelines += u.used;
    params = std::max(params, t->paramsPerRank);
    for (int k : t->stageType)
      memBw = std::min(memBw, groups[k].gpu->memoryGBs * 1e9 *
                                  cost.efficiency().memory);
    // The nodes of the stage groups the used pipelines take, in order.
    int64_t need = u.used * t->depth, taken = 0;
    bool homogeneous = std::all_of(t->stageType.begin(), t->stageType.end(),
                                   [&](int k) { return k == t->stageType[0]; });
    for (int k : std::set<int>(t->stageType.begin(), t->stageType.end()))
      for (int n : groups[k].nodes) {
        if (homogeneous && taken >= need)
          break;
        nodes.insert(n);
        taken += cluster.nodes[n].count / t->tp;
      }
  }
  return makespan + allReduceSeconds(pipelines, params, nodes) +
         double(params) * 32.0 / memBw;
}

double Search::allReduceSeconds(int64_t pipelines, int64_t params,
                                const std::set<int> &nodes) const {
  if (pipelines <= 1 || nodes.empty())
    return 0;
  double P = double(pipelines);
  double bw = nodes.size() > 1
                  ? cluster.network.bandwidthGbps / 8.0 * 1e9
                  : cluster.nodes[*nodes.begin()].bandwidthGBs() * 1e9;
  double gradBytes =
      double(params) * double(precisionBytes(cost.precision()).gradient);
  return 2.0 * (P - 1) / P * gradBytes / (bw * cost.efficiency().network);
}

PartitionPlan Search::assemble(const std::vector<TypeGroup> &groups,
                               const std::vector<const Template *> &chosen,
                               int64_t mb) const {
  PartitionPlan plan;
  plan.microBatch = mb;
  // Stage groups of each type, node by node, device by device; templates
  // draw them in order.
  std::vector<std::vector<std::pair<int, std::vector<int64_t>>>> pool(
      groups.size());
  std::vector<size_t> cursor(groups.size(), 0);
  for (const Template *t : chosen) {
    if (!t)
      continue;
    for (int k : t->stageType)
      if (pool[k].empty())
        for (int n : groups[k].nodes)
          for (int64_t d = 0; d + t->tp <= cluster.nodes[n].count; d += t->tp) {
            std::vector<int64_t> devs;
            for (int64_t i = 0; i < t->tp; ++i)
              devs.push_back(d + i);
            pool[k].push_back({n, devs});
          }
  }
  for (const Template *t : chosen) {
    if (!t)
      continue;
    for (int64_t p = 0; p < t->pipelines; ++p) {
      Pipeline pipe;
      pipe.stageSeconds = t->bottleneck;
      for (int64_t s = 0; s < t->depth; ++s) {
        auto &[node, devs] = pool[t->stageType[s]][cursor[t->stageType[s]]++];
        Stage st;
        st.node = node;
        st.devices = devs;
        st.firstLayer = t->ranges[s].first;
        st.lastLayer = t->ranges[s].second;
        st.embed = s == 0;
        st.head = s == t->depth - 1;
        st.seconds = t->stageSeconds[s];
        st.peakBytes = t->stagePeak[s];
        pipe.stages.push_back(st);
      }
      plan.pipelines.push_back(pipe);
    }
  }
  // Score with each pipeline's real placement (whether it crosses nodes).
  auto exact = evaluate(plan);
  if (exact)
    return *exact;
  llvm::consumeError(exact.takeError());
  finish(plan);
  return plan;
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
  if (cost.precision() == Precision::BF16Mixed)
    for (TypeGroup &g : groups)
      if (!g.gpu->bf16)
        g.smallestNeed = -1; // excluded below

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
      if (g.smallestNeed == -1)
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
    for (auto &perType : shapes)
      for (Template &t : perType)
        keep.push_back(t);
    // Map the per-type shapes to their stable copies.
    std::vector<std::vector<const Template *>> stable(groups.size());
    {
      auto it = keep.end() - 0;
      size_t total = 0;
      for (auto &perType : shapes)
        total += perType.size();
      it = keep.end() - int64_t(total);
      for (size_t k = 0; k < groups.size(); ++k)
        for (size_t i = 0; i < shapes[k].size(); ++i)
          stable[k].push_back(&*it++);
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
      if (groups[k].smallestNeed != -1)
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

} // namespace

llvm::Expected<PartitionPlan>
frenzy::evaluatePlan(const CostModel &cost, const MemoryModel &memory,
                     const ClusterSpec &cluster, const PartitionOptions &options,
                     const PartitionPlan &plan) {
  return Search(cost, memory, cluster, options).evaluate(plan);
}

llvm::Expected<PartitionPlan>
frenzy::partition(const CostModel &cost, const MemoryModel &memory,
                  const ClusterSpec &cluster, const PartitionOptions &options,
                  std::vector<Alternative> *explain) {
  return Search(cost, memory, cluster, options).run(explain);
}
