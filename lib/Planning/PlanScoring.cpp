//===- PlanScoring.cpp - stage times, memory and step time of a plan ------===//
//
// How the partitioner scores a plan: per-stage compute and communication
// time from the cost model, per-rank memory from the memory model, 1F1B
// pipeline time, water-filled micro-batch shares, the gradient all-reduce
// between pipelines and the optimizer step. evaluatePlan() exposes the same
// scoring for explicit plans (tests, baselines).
//
//===----------------------------------------------------------------------===//
#include "Search.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace frenzy;
namespace frenzy::planning {

double Search::stageSeconds(const TypeGroup &g, int64_t tp, int64_t first,
                            int64_t last, bool embed, bool head, int64_t mb,
                            bool spansNodes, const Link *next,
                            Recompute r) const {
  const Efficiency &e = cost.efficiency();
  bool full = r == Recompute::Full;
  double s = 0;
  if (embed)
    s += cost.blockSeconds(-1, *g.gpu, mb);
  if (head)
    s += cost.blockSeconds(INT64_MAX, *g.gpu, mb);
  s += (layerPrefix(*g.gpu)[last + 1] - layerPrefix(*g.gpu)[first]) *
       double(mb);
  // Full recomputation runs the stage's forward again before its backward
  // (frenzy-launch reruns the whole stage, embedding and head included).
  if (full) {
    if (embed)
      s += cost.blockForwardSeconds(-1, *g.gpu, mb);
    if (head)
      s += cost.blockForwardSeconds(INT64_MAX, *g.gpu, mb);
    if (last >= first)
      s += (layerPrefix(*g.gpu, true)[last + 1] -
            layerPrefix(*g.gpu, true)[first]) *
           double(mb);
  }
  s /= double(tp);
  double hidden = double(cost.boundaryBytesPerSequence() * mb);
  const ClusterNode &node = cluster.nodes[g.nodes.front()];
  double intra = node.bandwidthGBs() * 1e9 * e.network;
  // Megatron: 2 all-reduces forward, 2 backward per layer, and the
  // forward's 2 again under full recomputation.
  if (tp > 1)
    s += double(last - first + 1) * (full ? 6.0 : 4.0) *
         (2.0 * double(tp - 1) / double(tp) * hidden / intra +
          e.collectiveLatency);
  // Activations forward and gradients backward at the stage boundary, over
  // the link to the next stage's node (topology: rack, zone, pair).
  Link link = next         ? *next
              : spansNodes ? spanLink
                           : topology.link(g.nodes.front(), g.nodes.front());
  if (!head)
    s += 2.0 * (hidden / (link.bytesPerSecond * e.network) +
                link.latencySeconds);
  return s;
}

int64_t Search::stagePeak(const TypeGroup &g, int64_t tp, int64_t first,
                          int64_t last, int64_t stage, int64_t depth,
                          int64_t mb, Recompute r, int64_t inFlight) const {
  StageQuery q;
  q.firstLayer = first;
  q.lastLayer = last;
  q.embed = stage == 0;
  q.head = stage == depth - 1;
  q.microBatch = mb;
  q.tp = tp;
  q.sequenceParallel = tp > 1;
  q.recompute = r;
  q.inFlight = inFlight > 0 ? inFlight : depth - stage;
  MemoryOverheads o;
  o.contextBytes = g.gpu->contextBytes;
  o.ncclBytes = g.gpu->commBufferBytes;
  if (r != Recompute::Full)
    return memory.query(q, o).total();
  // Full recomputation as frenzy-launch runs it (RankRunner): a whole
  // stage's forward again before each backward. Between the two only the
  // hidden state the stage received is kept per micro-batch in flight; the
  // backward then holds one micro-batch's activations, as selective does.
  int64_t held = q.inFlight;
  q.recompute = Recompute::Selective;
  q.inFlight = 1;
  int64_t received =
      stage > 0 ? cost.boundaryBytesPerSequence() * mb * (held - 1) : 0;
  return memory.query(q, o).total() + received;
}

Recompute Search::stageMode(const TypeGroup &g, int64_t tp, int64_t first,
                            int64_t last, int64_t stage, int64_t depth,
                            int64_t mb, int64_t inFlight) const {
  if (!opts.recomputeAuto || opts.recompute == Recompute::Full ||
      stagePeak(g, tp, first, last, stage, depth, mb, opts.recompute,
                inFlight) <= g.gpu->memoryBytes)
    return opts.recompute;
  return Recompute::Full;
}

/// A one-node type group for scoring a placed stage.
static TypeGroup placedGroup(const ClusterSpec &cluster, int node) {
  TypeGroup g;
  g.gpu = cluster.gpuType(cluster.nodes[node].gpu);
  g.nodes = {node};
  g.minPerNode = cluster.nodes[node].count;
  return g;
}

void Search::checkGpipe(PartitionPlan &plan) const {
  plan.gpipe = false;
  plan.scheduleNote.clear();
  if (!opts.gpipe)
    return;
  // GPipe runs every forward before any backward: a stage holds all of its
  // pipeline's micro-batches, where 1F1B holds at most depth - stage. The
  // stages keep their recompute modes (escalating one would change its
  // time and so the batch shares being checked).
  std::vector<int64_t> peaks;
  for (size_t pi = 0; pi < plan.pipelines.size(); ++pi) {
    const Pipeline &p = plan.pipelines[pi];
    int64_t depth = int64_t(p.stages.size());
    for (int64_t s = 0; s < depth; ++s) {
      const Stage &st = p.stages[s];
      TypeGroup g = placedGroup(cluster, st.node);
      int64_t peak =
          stagePeak(g, st.tp(), st.firstLayer, st.lastLayer, s, depth,
                    plan.microBatch, st.recompute,
                    std::max<int64_t>(1, p.microBatches));
      if (peak > g.gpu->memoryBytes) {
        plan.scheduleNote = llvm::formatv(
            "gpipe would hold all {0} micro-batches of pipeline {1} on its "
            "stage {2}: {3:f1} GiB, {4} has {5:f1} GiB; 1F1B holds at most "
            "{6} there ({7:f1} GiB)",
            p.microBatches, pi, s, double(peak) / double(1ll << 30),
            g.gpu->name, double(g.gpu->memoryBytes) / double(1ll << 30),
            depth - s, double(st.peakBytes) / double(1ll << 30));
        return;
      }
      peaks.push_back(peak);
    }
  }
  plan.gpipe = true;
  size_t i = 0;
  for (Pipeline &p : plan.pipelines)
    for (Stage &st : p.stages)
      st.peakBytes = peaks[i++];
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
  if (!plan.fixedShares)
    waterFill(plan);
  plan.pipelineSeconds = 0;
  for (const Pipeline &p : plan.pipelines)
    plan.pipelineSeconds = std::max(plan.pipelineSeconds, p.seconds());
  allReduceAndOptimizer(plan);
}

/// Micro-batches a 1F1B pipeline of `depth` stages, `stage` seconds each,
/// finishes within T seconds.
static int64_t microBatchesWithin(double T, double stage, int64_t depth) {
  return std::max<int64_t>(0, int64_t(std::floor(T / stage + 1e-9)) - depth + 1);
}

/// The smallest T (to bisection precision) with count(T) >= M: the
/// makespan at which the pipelines can take every micro-batch.
template <typename Count>
static double makespan(const Count &count, int64_t M) {
  double lo = 0, hi = 1;
  while (count(hi) < M)
    hi *= 2;
  for (int i = 0; i < 64; ++i) {
    double mid = 0.5 * (lo + hi);
    (count(mid) >= M ? hi : lo) = mid;
  }
  return hi;
}

void Search::waterFill(PartitionPlan &plan) const {
  int64_t M = opts.globalBatch / plan.microBatch;
  auto count = [&](double T) {
    int64_t n = 0;
    for (const Pipeline &p : plan.pipelines)
      n += microBatchesWithin(T, p.stageSeconds, int64_t(p.stages.size()));
    return n;
  };
  double T = makespan(count, M);
  int64_t total = 0;
  for (Pipeline &p : plan.pipelines) {
    p.microBatches =
        microBatchesWithin(T, p.stageSeconds, int64_t(p.stages.size()));
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
}

void Search::allReduceAndOptimizer(PartitionPlan &plan) const {
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
  for (size_t pi = 0; pi < plan.pipelines.size(); ++pi) {
    Pipeline &p = plan.pipelines[pi];
    std::set<int> nodes;
    for (const Stage &st : p.stages)
      nodes.insert(st.node);
    p.stageSeconds = 0;
    int64_t depth = int64_t(p.stages.size());
    for (int64_t s = 0; s < depth; ++s) {
      Stage &st = p.stages[s];
      TypeGroup g = placedGroup(cluster, st.node);
      Link next = topology.link(
          st.node, p.stages[std::min<int64_t>(s + 1, depth - 1)].node);
      st.recompute = stageMode(g, st.tp(), st.firstLayer, st.lastLayer, s,
                               depth, plan.microBatch);
      st.seconds = stageSeconds(g, st.tp(), st.firstLayer, st.lastLayer,
                                st.embed, st.head, plan.microBatch,
                                nodes.size() > 1, &next, st.recompute);
      st.peakBytes = stagePeak(g, st.tp(), st.firstLayer, st.lastLayer, s,
                               depth, plan.microBatch, st.recompute);
      if (st.peakBytes > g.gpu->memoryBytes)
        return llvm::createStringError(
            std::errc::not_enough_memory,
            "pipeline %zu stage %lld needs %.1f GiB per GPU under %s "
            "recompute, %s has %.1f GiB",
            pi, (long long)s, double(st.peakBytes) / double(1ll << 30),
            recomputeName(st.recompute).str().c_str(), g.gpu->name.c_str(),
            double(g.gpu->memoryBytes) / double(1ll << 30));
      p.stageSeconds = std::max(p.stageSeconds, st.seconds);
    }
  }
  finish(plan);
  checkGpipe(plan);
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
        n += t->pipelines * microBatchesWithin(T, t->bottleneck, t->depth);
    return n;
  };
  double T = makespan(count, M);
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
      int64_t m = microBatchesWithin(T, t->bottleneck, t->depth);
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
  // A ring through the nodes, paced by its slowest link (Topology.h).
  double gradBytes =
      double(params) * double(precisionBytes(cost.precision()).gradient);
  std::vector<int> ring(nodes.begin(), nodes.end());
  return topology.ringAllReduceSeconds(ring, pipelines, gradBytes,
                                       cost.efficiency().network);
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
        st.recompute = t->stageRecompute[s];
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

} // namespace frenzy::planning

using namespace frenzy::planning;

llvm::Expected<PartitionPlan>
frenzy::evaluatePlan(const CostModel &cost, const MemoryModel &memory,
                     const ClusterSpec &cluster, const PartitionOptions &options,
                     const PartitionPlan &plan) {
  return Search(cost, memory, cluster, options).evaluate(plan);
}
