//===- PlanCost.cpp - time and memory of stages and plans of a problem ----===//
//
// The formulas are docs/partitioner.md's "Cost model"; stage memory repeats
// MemoryModel::query's arithmetic on the problem's per-block parts (a unit
// test holds the two equal), so the solvers never need the IR.
//
//===----------------------------------------------------------------------===//
#include "PlanCost.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace frenzy::plan {

std::vector<int64_t> usableMicroBatches(const PlanProblem &p) {
  std::vector<int64_t> r;
  for (int64_t mb : p.microBatches)
    if (mb > 0 && p.globalBatch % mb == 0)
      r.push_back(mb);
  return r;
}

static std::vector<std::string> nodeNames(const PlanProblem &p) {
  std::vector<std::string> r;
  for (const Node &n : p.nodes)
    r.push_back(n.name);
  return r;
}

static std::vector<double> nodeLinks(const PlanProblem &p) {
  std::vector<double> r;
  for (const Node &n : p.nodes)
    r.push_back(n.linkGBs);
  return r;
}

static std::vector<int> allNodes(const PlanProblem &p) {
  std::vector<int> r(p.nodes.size());
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = int(i);
  return r;
}

Topology problemTopology(const PlanProblem &p) {
  return Topology(nodeNames(p), nodeLinks(p),
                  {p.networkGBs * 8, p.networkLatency * 1e6}, p.topology);
}

PlanCost::PlanCost(const PlanProblem &problem)
    : p(problem), topo(problemTopology(problem)),
      spanLink(topo.fastestBetween(allNodes(problem))) {
  int64_t L = p.model.layers;
  auto block = [&](int64_t b) -> const BlockProfile & {
    static const BlockProfile empty;
    return b < int64_t(p.model.blocks.size()) ? p.model.blocks[b] : empty;
  };
  for (const DeviceProfile &d : p.devices) {
    std::vector<double> pre(1, 0.0);
    for (int64_t l = 0; l < std::max<int64_t>(1, L); ++l)
      pre.push_back(pre.back() + (l + 1 < int64_t(d.blockSeconds.size())
                                      ? d.blockSeconds[l + 1]
                                      : 0.0));
    prefix.push_back(std::move(pre));
    std::vector<double> fwd(1, 0.0);
    for (int64_t l = 0; l < std::max<int64_t>(1, L); ++l)
      fwd.push_back(fwd.back() + (l + 1 < int64_t(d.blockForwardSeconds.size())
                                      ? d.blockForwardSeconds[l + 1]
                                      : 0.0));
    forwardPrefix.push_back(std::move(fwd));
  }
  splitParams.assign(L + 1, 0);
  wholeParams.assign(L + 1, 0);
  buffers.assign(L + 1, 0);
  params.assign(L + 1, 0);
  for (int64_t l = 0; l < L; ++l) {
    const BlockProfile &b = block(l + 1);
    splitParams[l + 1] = splitParams[l] + b.splitParams;
    wholeParams[l + 1] = wholeParams[l] + b.wholeParams;
    buffers[l + 1] = buffers[l] + b.buffers;
    params[l + 1] = params[l] + b.params;
  }
}

const PlanCost::LayerTable &PlanCost::table(int64_t tp) const {
  LayerTable &t = tables[tp];
  if (!t.saved.empty())
    return t;
  int64_t L = std::max<int64_t>(0, p.model.layers);
  // Sharded token-wise activations only where the program runs SP.
  bool sp = tp > 1 && p.sequenceParallel;
  t.saved.assign(L + 1, 0);
  std::vector<int64_t> level0(L, 0);
  for (int64_t l = 0; l < L; ++l) {
    const BlockProfile &b = p.model.blocks[l + 1];
    t.saved[l + 1] = t.saved[l] + b.saved.at(tp, sp);
    level0[l] = b.transient.at(tp, sp);
  }
  t.transientMax = RangeMax(std::move(level0));
  return t;
}

double PlanCost::stageSeconds(int device, int node, int64_t tp, int64_t first,
                              int64_t last, bool embed, bool head, int64_t mb,
                              bool spansNodes, const Link *next,
                              bool full, StageParts *parts) const {
  const DeviceProfile &d = p.devices[device];
  const ModelProfile &m = p.model;
  double s = 0;
  // Under full recomputation the stage's forward runs twice (frenzy-launch
  // reruns the whole stage, embedding and head included).
  auto block = [&](const std::vector<double> &sec, int64_t b) {
    return b < int64_t(sec.size()) ? sec[b] * double(mb) : 0.0;
  };
  if (embed)
    s += block(d.blockSeconds, ModelProfile::embedBlock()) +
         (full ? block(d.blockForwardSeconds, ModelProfile::embedBlock()) : 0);
  if (head)
    s += block(d.blockSeconds, m.headBlock()) +
         (full ? block(d.blockForwardSeconds, m.headBlock()) : 0);
  const std::vector<double> &pre = prefix[device];
  if (last >= first) {
    s += (pre[last + 1] - pre[first]) * double(mb);
    if (full)
      s += (forwardPrefix[device][last + 1] - forwardPrefix[device][first]) *
           double(mb);
  }
  // The forward alone: blockForwardSeconds where the type has it (else a
  // third of the compute, the usual 1:2 forward:backward split).
  double fwd = 0;
  if (embed)
    fwd += block(d.blockForwardSeconds, ModelProfile::embedBlock());
  if (head)
    fwd += block(d.blockForwardSeconds, m.headBlock());
  if (last >= first)
    fwd += (forwardPrefix[device][last + 1] - forwardPrefix[device][first]) *
           double(mb);
  if (d.blockForwardSeconds.empty())
    fwd = s / 3;
  fwd /= double(tp);
  s /= double(tp);
  double hidden = double(m.boundaryBytesPerSequence * mb);
  double intra = p.nodes[node].linkGBs * 1e9 * p.networkEfficiency;
  // Megatron: 2 all-reduces forward, 2 backward per layer (and the
  // forward's 2 again under full recomputation).
  if (tp > 1) {
    // A calibrated node: the measured all-reduce by buffer bytes, as the
    // predicted timeline prices the program's collectives (small ones are
    // far slower than latency + bytes over the large buffers' rate).
    const Node &n = p.nodes[node];
    double one = n.reduceMeasured
                     ? n.reduceOverhead +
                           n.reduce.allReduceSeconds(hidden, double(tp))
                     : 2.0 * double(tp - 1) / double(tp) * hidden / intra +
                           p.collectiveLatency;
    double layers = double(std::max<int64_t>(0, last - first + 1));
    s += layers * (full ? 6.0 : 4.0) * one;
    fwd += layers * 2.0 * one; // the forward's own 2
  }
  // Activations forward and gradients backward at the stage boundary, over
  // the link to the next stage's node (Topology: rack, zone, pair); within
  // a node the network's latency, as before the topology existed.
  Link link = next         ? *next
              : spansNodes ? spanLink
                           : topo.link(node, node);
  double transfer = 0;
  if (!head)
    transfer = link.kind == LinkKind::IntraNode
                   ? hidden / (link.bytesPerSecond * p.networkEfficiency) +
                         p.networkLatency
                   : link.seconds(hidden, p.networkEfficiency);
  if (parts) {
    parts->forward = fwd;
    parts->transfer = transfer;
  }
  s += 2.0 * transfer;
  return s;
}

bool PlanCost::useFull(int device, int64_t tp, int64_t first, int64_t last,
                       bool embed, bool head, int64_t inFlight,
                       int64_t mb) const {
  if (p.fullRecompute == 2)
    return true;
  return p.fullRecompute == 1 &&
         !p.devices[device].blockForwardSeconds.empty() &&
         stagePeak(device, tp, first, last, embed, head, inFlight, mb) >
             p.devices[device].memoryBytes;
}

int64_t PlanCost::stagePeak(int device, int64_t tp, int64_t first,
                            int64_t last, bool embed, bool head,
                            int64_t inFlight, int64_t mb, bool full) const {
  const ModelProfile &m = p.model;
  // Full recomputation as frenzy-launch runs it (RankRunner): between a
  // micro-batch's forward and backward only the hidden state the stage
  // received is kept; the backward then holds one micro-batch's
  // activations.
  int64_t received = 0;
  if (full) {
    if (!embed)
      received = m.boundaryBytesPerSequence * mb * (inFlight - 1);
    inFlight = 1;
  }
  bool sp = tp > 1 && p.sequenceParallel;
  int64_t split = 0, whole = 0, buf = 0, saved = 0, transient = 0;
  auto add = [&](const BlockProfile &b) {
    split += b.splitParams;
    whole += b.wholeParams;
    buf += b.buffers;
    saved += b.saved.at(tp, sp);
    transient = std::max(transient, b.transient.at(tp, sp));
  };
  if (embed)
    add(m.blocks[ModelProfile::embedBlock()]);
  first = std::max<int64_t>(0, first);
  last = std::min<int64_t>(last, m.layers - 1);
  if (last >= first) {
    const LayerTable &t = table(tp);
    split += splitParams[last + 1] - splitParams[first];
    whole += wholeParams[last + 1] - wholeParams[first];
    buf += buffers[last + 1] - buffers[first];
    saved += t.saved[last + 1] - t.saved[first];
    transient = std::max(transient, t.transientMax.max(first, last));
  }
  if (head)
    add(m.blocks[m.headBlock()]);
  int64_t rankParams = (split + tp - 1) / tp + whole;
  int64_t state = rankParams * m.stateBytesPerParam + buf;
  // Activations scale with the micro-batch (the parts are at the reference).
  auto scale = [&](int64_t bytes) {
    return (bytes * mb + m.referenceBatch - 1) / m.referenceBatch;
  };
  int64_t activations = inFlight * scale(saved) + received;
  int64_t trans = scale(transient) + (head ? scale(m.ioBytes) : 0);
  const DeviceProfile &d = p.devices[device];
  // The backend's workspace is one allocation held all run: no
  // fragmentation share (MemoryModel::query does the same).
  int64_t overhead = d.contextBytes + d.workspaceBytes +
                     (tp > 1 ? d.commBufferBytes : 0) +
                     int64_t(m.fragmentation *
                             double(state + activations + trans));
  return state + activations + trans + overhead;
}

int64_t PlanCost::stageParams(int64_t tp, int64_t first, int64_t last,
                              bool embed, bool head) const {
  const ModelProfile &m = p.model;
  int64_t n = (embed ? m.blocks[ModelProfile::embedBlock()].params : 0) +
              (head ? m.blocks[m.headBlock()].params : 0);
  first = std::max<int64_t>(0, first);
  last = std::min<int64_t>(last, m.layers - 1);
  if (last >= first)
    n += params[last + 1] - params[first];
  return n / tp;
}

double PlanCost::allReduceSeconds(int64_t pipelines, int64_t prm,
                                  bool crossNodes, int node) const {
  if (pipelines <= 1)
    return 0;
  double P = double(pipelines);
  double gradBytes = double(prm) * double(p.model.gradientBytesPerParam);
  // Across nodes: the exact score's ring through every node (a measured
  // all-reduce across them where there is one), so the search and the
  // score price the same collective the same way.
  if (crossNodes)
    return topo.ringAllReduceSeconds(allNodes(p), pipelines, gradBytes,
                                     p.networkEfficiency);
  double bw = p.nodes[node].linkGBs * 1e9;
  return 2.0 * (P - 1) / P * gradBytes / (bw * p.networkEfficiency) +
         p.collectiveLatency;
}

double PlanCost::allReduceSeconds(int64_t pipelines, int64_t prm,
                                  llvm::ArrayRef<int> nodes) const {
  if (nodes.size() <= 1)
    return allReduceSeconds(pipelines, prm, false, nodes.empty() ? 0 : nodes[0]);
  if (pipelines <= 1)
    return 0;
  // A ring through the nodes, paced by its slowest link.
  return topo.ringAllReduceSeconds(
      nodes, pipelines, double(prm) * double(p.model.gradientBytesPerParam),
      p.networkEfficiency);
}

double PlanCost::optimizerSeconds(int64_t prm, double slowestMemGBs) const {
  return double(prm) * 32.0 / (slowestMemGBs * 1e9 * p.memoryEfficiency);
}

int64_t PlanCost::microBatchesWithin(double T, double stage, int64_t depth) {
  return std::max<int64_t>(0,
                           int64_t(std::floor(T / stage + 1e-9)) - depth + 1);
}

void PlanCost::waterFill(PartitionPlan &plan) const {
  // The smallest finish time T at which the pipelines can take every
  // micro-batch (bisection), then the surplus trimmed one micro-batch at a
  // time from the latest-finishing pipeline (a heap: thousands of
  // pipelines at 16,384 GPUs).
  int64_t M = p.globalBatch / plan.microBatch;
  auto count = [&](double T) {
    int64_t n = 0;
    for (const Pipeline &q : plan.pipelines)
      n += microBatchesWithin(T, q.stageSeconds, int64_t(q.stages.size()));
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
  std::priority_queue<std::pair<double, size_t>> latest;
  for (size_t i = 0; i < plan.pipelines.size(); ++i) {
    Pipeline &q = plan.pipelines[i];
    q.microBatches =
        microBatchesWithin(hi, q.stageSeconds, int64_t(q.stages.size()));
    total += q.microBatches;
    if (q.microBatches > 0)
      latest.push({q.seconds(), i});
  }
  while (total > M) {
    size_t i = latest.top().second;
    latest.pop();
    Pipeline &q = plan.pipelines[i];
    --q.microBatches;
    --total;
    if (q.microBatches > 0)
      latest.push({q.seconds(), i});
  }
  plan.pipelines.erase(
      std::remove_if(plan.pipelines.begin(), plan.pipelines.end(),
                     [](const Pipeline &q) { return q.microBatches == 0; }),
      plan.pipelines.end());
}

void PlanCost::allReduceAndOptimizer(PartitionPlan &plan) const {
  int64_t prm = 0;
  double memGBs = 1e30;
  int firstNode = -1;
  std::vector<int> nodes;
  for (const Pipeline &q : plan.pipelines)
    for (const Stage &st : q.stages) {
      if (firstNode < 0)
        firstNode = st.node;
      nodes.push_back(st.node);
      prm = std::max(prm, stageParams(st.tp(), st.firstLayer, st.lastLayer,
                                      st.embed, st.head));
      memGBs = std::min(memGBs,
                        p.devices[p.nodes[st.node].device].memoryGBs);
    }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  plan.allReduceSeconds =
      firstNode < 0 ? 0
                    : allReduceSeconds(int64_t(plan.pipelines.size()), prm,
                                       nodes);
  plan.optimizerSeconds = firstNode < 0 ? 0 : optimizerSeconds(prm, memGBs);
}

llvm::Expected<PartitionPlan> PlanCost::score(PartitionPlan plan) const {
  for (size_t qi = 0; qi < plan.pipelines.size(); ++qi) {
    Pipeline &q = plan.pipelines[qi];
    bool spans = false;
    for (const Stage &st : q.stages)
      spans |= st.node != q.stages.front().node;
    q.stageSeconds = 0;
    int64_t depth = int64_t(q.stages.size());
    // A pipeline that spans nodes has its boundaries priced at the slowest
    // inter-node link it crosses (the network without a topology, as the
    // solvers' templates assume for every boundary).
    Link slowest;
    slowest.bytesPerSecond = 1e300;
    for (int64_t s = 0; s + 1 < depth; ++s)
      if (q.stages[s].node != q.stages[s + 1].node) {
        Link l = topo.link(q.stages[s].node, q.stages[s + 1].node);
        if (l.bytesPerSecond < slowest.bytesPerSecond)
          slowest = l;
      }
    for (int64_t s = 0; s < depth; ++s) {
      Stage &st = q.stages[s];
      if (st.node < 0 || st.node >= int(p.nodes.size()) || st.tp() < 1)
        return llvm::createStringError(std::errc::invalid_argument,
                                       "stage %lld: no such node or no GPUs",
                                       (long long)s);
      int device = p.nodes[st.node].device;
      const DeviceProfile &d = p.devices[device];
      st.fullRecompute = useFull(device, st.tp(), st.firstLayer, st.lastLayer,
                                 st.embed, st.head, depth - s, plan.microBatch);
      StageParts parts;
      st.seconds = stageSeconds(device, st.node, st.tp(), st.firstLayer,
                                st.lastLayer, st.embed, st.head,
                                plan.microBatch, spans,
                                spans ? &slowest : nullptr, st.fullRecompute,
                                &parts);
      st.forwardSeconds = parts.forward;
      st.transferSeconds = parts.transfer;
      st.peakBytes =
          stagePeak(device, st.tp(), st.firstLayer, st.lastLayer, st.embed,
                    st.head, depth - s, plan.microBatch, st.fullRecompute);
      st.activationBytes =
          stagePeak(device, st.tp(), st.firstLayer, st.lastLayer, st.embed,
                    st.head, depth - s + 1, plan.microBatch,
                    st.fullRecompute) -
          st.peakBytes;
      if (st.peakBytes > d.memoryBytes)
        return llvm::createStringError(
            std::errc::not_enough_memory,
            "pipeline %zu stage %lld needs %.1f GiB per GPU%s, %s has %.1f "
            "GiB",
            qi, (long long)s, double(st.peakBytes) / double(1ll << 30),
            st.fullRecompute        ? " with full recomputation"
            : p.fullRecompute == 0 ? " without full recomputation"
                                   : "",
            d.name.c_str(), double(d.memoryBytes) / double(1ll << 30));
      q.stageSeconds = std::max(q.stageSeconds, st.seconds);
    }
  }
  if (!plan.fixedShares)
    waterFill(plan);
  plan.pipelineSeconds = 0;
  for (const Pipeline &q : plan.pipelines)
    plan.pipelineSeconds = std::max(plan.pipelineSeconds, q.seconds());
  allReduceAndOptimizer(plan);
  checkGpipe(plan);
  plan.sequenceParallel = p.sequenceParallel;
  return plan;
}

void PlanCost::checkGpipe(PartitionPlan &plan) const {
  plan.gpipe = false;
  plan.scheduleNote.clear();
  if (!p.gpipe)
    return;
  // GPipe runs every forward before any backward: a stage holds all of its
  // pipeline's micro-batches, where 1F1B holds at most depth - stage. The
  // stages keep their recompute modes (changing one would change its time
  // and so the batch shares being checked).
  std::vector<int64_t> peaks;
  for (size_t qi = 0; qi < plan.pipelines.size(); ++qi) {
    const Pipeline &q = plan.pipelines[qi];
    int64_t depth = int64_t(q.stages.size());
    for (int64_t s = 0; s < depth; ++s) {
      const Stage &st = q.stages[s];
      int device = p.nodes[st.node].device;
      const DeviceProfile &d = p.devices[device];
      int64_t peak = stagePeak(device, st.tp(), st.firstLayer, st.lastLayer,
                               st.embed, st.head,
                               std::max<int64_t>(1, q.microBatches),
                               plan.microBatch, st.fullRecompute);
      if (peak > d.memoryBytes) {
        plan.scheduleNote = llvm::formatv(
            "gpipe would hold all {0} micro-batches of pipeline {1} on its "
            "stage {2}: {3:f1} GiB, {4} has {5:f1} GiB; 1F1B holds at most "
            "{6} there ({7:f1} GiB)",
            q.microBatches, qi, s, double(peak) / double(1ll << 30), d.name,
            double(d.memoryBytes) / double(1ll << 30), depth - s,
            double(st.peakBytes) / double(1ll << 30));
        return;
      }
      peaks.push_back(peak);
    }
  }
  plan.gpipe = true;
  size_t i = 0;
  for (Pipeline &q : plan.pipelines)
    for (Stage &st : q.stages)
      st.peakBytes = peaks[i++];
}

llvm::Expected<PartitionPlan> scorePlan(const PlanProblem &problem,
                                        PartitionPlan plan) {
  return PlanCost(problem).score(std::move(plan));
}

} // namespace frenzy::plan
