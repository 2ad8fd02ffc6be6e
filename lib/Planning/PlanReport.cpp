//===- PlanReport.cpp - the partition plan as a table or JSON -------------===//
#include "frenzy/Cluster/Topology.h"
#include "frenzy/Planning/Partitioner.h"

#include "frenzy/Cluster/DeviceProfile.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace frenzy;

namespace {

std::string layers(const Stage &s) {
  std::string r;
  if (s.embed)
    r += "embed ";
  if (s.lastLayer >= s.firstLayer)
    r += llvm::formatv("{0}-{1}", s.firstLayer, s.lastLayer).str();
  if (s.head)
    r += " head";
  return r;
}

struct Totals {
  double tokensPerSecond = 0, mfu = 0, clusterTflops = 0;
  int64_t gpusUsed = 0, gpusTotal = 0;
};

Totals totals(const PartitionPlan &plan, const ClusterSpec &cluster,
              const CostModel &cost, const PartitionOptions &o,
              const TimelineScore *timeline) {
  Totals t;
  for (const ClusterNode &n : cluster.nodes) {
    t.gpusTotal += n.count;
    if (const GpuType *g = cluster.gpuType(n.gpu)) // measured, when it was
      t.clusterTflops += (g->profile ? g->profile->peakFlops() / 1e12
                                     : g->tensorTflops) *
                         double(n.count);
  }
  for (const Pipeline &p : plan.pipelines)
    for (const Stage &s : p.stages)
      t.gpusUsed += s.tp();
  double step = timeline ? timeline->stepSeconds : plan.stepSeconds();
  t.tokensPerSecond = double(o.globalBatch * o.seq) / step;
  t.mfu = cost.flopsPerSequence() * double(o.globalBatch) / step /
          (t.clusterTflops * 1e12);
  return t;
}

/// A link's rate in Gb/s, four significant digits (a measured 0.94 Gb/s
/// link must not print as 1).
std::string gbps(const Link &l) {
  return llvm::formatv("{0}", llvm::format("%.4g", l.bytesPerSecond * 8 / 1e9))
      .str();
}

} // namespace

void frenzy::printPlanReport(const PartitionPlan &plan,
                             const ClusterSpec &cluster, const CostModel &cost,
                             const PartitionOptions &o,
                             llvm::raw_ostream &os,
                             const TimelineScore *timeline) {
  Totals t = totals(plan, cluster, cost, o, timeline);
  Topology topology(cluster);
  os << llvm::formatv("plan: {0} pipeline(s), {1} of {2} GPUs, micro-batch "
                      "{3}, global batch {4} x {5}, {6}, recompute {7}{8}\n",
                      plan.pipelines.size(), t.gpusUsed, t.gpusTotal,
                      plan.microBatch, o.globalBatch, o.seq,
                      precisionName(cost.precision()),
                      o.fullRecompute == 2 ? llvm::StringRef("full")
                                           : recomputeName(o.recompute),
                      o.fullRecompute == 1 ? " (full where only it fits)" : "");
  os << "schedule: " << (plan.gpipe ? "gpipe" : "1f1b");
  if (!plan.scheduleNote.empty())
    os << " (" << plan.scheduleNote << ")";
  os << "\n";
  if (std::string topo = topology.summary(); !topo.empty())
    os << "topology: " << topo << "\n";
  for (size_t p = 0; p < plan.pipelines.size(); ++p) {
    const Pipeline &pipe = plan.pipelines[p];
    os << llvm::formatv("pipeline {0}: {1} stage(s), {2} micro-batches "
                        "({3} sequences), {4:f1} ms\n",
                        p, pipe.stages.size(), pipe.microBatches,
                        pipe.microBatches * plan.microBatch,
                        pipe.seconds() * 1e3);
    for (size_t s = 0; s < pipe.stages.size(); ++s) {
      const Stage &st = pipe.stages[s];
      const ClusterNode &node = cluster.nodes[st.node];
      const GpuType *g = cluster.gpuType(node.gpu);
      std::string devs;
      for (int64_t d : st.devices)
        devs += (devs.empty() ? "" : ",") + std::to_string(d);
      os << llvm::formatv(
          "  stage {0}: {1} {2} gpus [{3}] tp {4}{10}  layers {5}  memory "
          "{6:f1}/{7:f1} GiB  {8:f2} ms per micro-batch  recompute {9}",
          s, node.name, g->name, devs, st.tp(), layers(st),
          double(st.peakBytes) / double(1ll << 30),
          double(g->memoryBytes) / double(1ll << 30), st.seconds * 1e3,
          st.fullRecompute ? llvm::StringRef("full")
                           : recomputeName(o.recompute),
          plan.sequenceParallel && st.tp() > 1 ? "+sp" : "");
      // The link activations and gradients cross to the next stage.
      if (s + 1 < pipe.stages.size() && pipe.stages[s + 1].node != st.node) {
        Link l = topology.link(st.node, pipe.stages[s + 1].node);
        os << llvm::formatv("  -> {0} over {1} {2} Gb/s{3}, {4:f3} ms per "
                            "transfer",
                            cluster.nodes[pipe.stages[s + 1].node].name,
                            linkKindName(l.kind), gbps(l),
                            l.measured ? " measured" : "",
                            st.transferSeconds * 1e3);
      }
      os << "\n";
    }
  }
  for (const IdleGpus &idle : plan.idle) {
    std::string devs;
    for (int64_t d : idle.devices)
      devs += (devs.empty() ? "" : ",") + std::to_string(d);
    os << llvm::formatv("unused: {0} {1} gpus [{2}]: {3}\n",
                        cluster.nodes[idle.node].name,
                        cluster.nodes[idle.node].gpu, devs, idle.why);
  }
  // With a timeline score the step is the predicted timeline's (what the
  // planner chose by and --emit=trace plays); the search's formula stays
  // beside it for its parts.
  if (timeline)
    os << llvm::formatv("step: {0:f2} ms, predicted timeline (the search's "
                        "estimate {1:f2} ms: pipelines {2:f2}, gradient "
                        "all-reduce {3:f2}, optimizer {4:f2})\n",
                        timeline->stepSeconds * 1e3, plan.stepSeconds() * 1e3,
                        plan.pipelineSeconds * 1e3, plan.allReduceSeconds * 1e3,
                        plan.optimizerSeconds * 1e3);
  else
    os << llvm::formatv("step: {0:f1} ms (pipelines {1:f1}, gradient "
                        "all-reduce {2:f1}, optimizer {3:f1})\n",
                        plan.stepSeconds() * 1e3, plan.pipelineSeconds * 1e3,
                        plan.allReduceSeconds * 1e3,
                        plan.optimizerSeconds * 1e3);
  if (timeline && timeline->candidates.size() > 1) {
    os << "re-scored with the predicted timeline (the search's best shapes):";
    for (const auto &[spec, seconds] : timeline->candidates)
      os << llvm::formatv(" {0}: {1:f2} ms;", spec, seconds * 1e3);
    os << "\n";
  }
  if (plan.pipelines.size() > 1) {
    std::vector<int> nodes;
    for (const Pipeline &p : plan.pipelines)
      for (const Stage &st : p.stages)
        if (!llvm::is_contained(nodes, st.node))
          nodes.push_back(st.node);
    std::sort(nodes.begin(), nodes.end());
    Link l = topology.ringBottleneck(nodes);
    os << llvm::formatv("gradient all-reduce: ring of {0} pipelines on {1} "
                        "node(s), slowest link {2} {3} Gb/s{4}",
                        plan.pipelines.size(), nodes.size(),
                        linkKindName(l.kind), gbps(l),
                        l.measured ? " measured" : "");
    if (const Link *m = topology.measuredAllReduce(nodes))
      os << llvm::formatv(", all-reduce measured across them {0} Gb/s bus "
                          "{1:f0} us",
                          gbps(*m), m->latencySeconds * 1e6);
    os << llvm::formatv(": {0:f3} ms\n", plan.allReduceSeconds * 1e3);
  }
  // CPU ranks reach tens of GFLOPS: in TFLOPS the peak would print as 0.
  if (t.clusterTflops < 1.0)
    os << llvm::formatv("throughput: {0:f0} tokens/s, MFU {1:f1}% of the "
                        "cluster's {2:f1} GFLOPS\n",
                        t.tokensPerSecond, 100.0 * t.mfu,
                        t.clusterTflops * 1e3);
  else
    os << llvm::formatv("throughput: {0:f0} tokens/s, MFU {1:f1}% of the "
                        "cluster's {2:f0} TFLOPS\n",
                        t.tokensPerSecond, 100.0 * t.mfu, t.clusterTflops);
}

void frenzy::printPlanJson(const PartitionPlan &plan,
                           const ClusterSpec &cluster, const CostModel &cost,
                           const PartitionOptions &o, llvm::raw_ostream &os,
                           const TimelineScore *timeline) {
  Totals t = totals(plan, cluster, cost, o, timeline);
  llvm::json::Array pipes;
  for (const Pipeline &p : plan.pipelines) {
    llvm::json::Array stages;
    for (const Stage &s : p.stages) {
      llvm::json::Array devs;
      for (int64_t d : s.devices)
        devs.push_back(d);
      stages.push_back(llvm::json::Object{
          {"node", cluster.nodes[s.node].name},
          {"gpu", cluster.nodes[s.node].gpu},
          {"devices", std::move(devs)},
          {"first_layer", s.firstLayer},
          {"last_layer", s.lastLayer},
          {"embed", s.embed},
          {"head", s.head},
          {"peak_bytes", s.peakBytes},
          {"recompute",
           s.fullRecompute ? "full" : recomputeName(o.recompute).str()},
          {"seconds_per_micro_batch", s.seconds}});
    }
    pipes.push_back(llvm::json::Object{{"micro_batches", p.microBatches},
                                       {"seconds", p.seconds()},
                                       {"stages", std::move(stages)}});
  }
  llvm::json::Array idle;
  for (const IdleGpus &i : plan.idle) {
    llvm::json::Array devs;
    for (int64_t d : i.devices)
      devs.push_back(d);
    idle.push_back(llvm::json::Object{{"node", cluster.nodes[i.node].name},
                                      {"gpu", cluster.nodes[i.node].gpu},
                                      {"devices", std::move(devs)},
                                      {"why", i.why}});
  }
  llvm::json::Object root{{"micro_batch", plan.microBatch},
                          {"unused", std::move(idle)},
                          {"global_batch", o.globalBatch},
                          {"seq", o.seq},
                          {"step_seconds", timeline ? timeline->stepSeconds
                                                    : plan.stepSeconds()},
                          {"schedule", plan.gpipe ? "gpipe" : "1f1b"},
                          {"tokens_per_second", t.tokensPerSecond},
                          {"mfu", t.mfu},
                          {"pipelines", std::move(pipes)}};
  if (timeline) { // the step above is the timeline's: the search's beside
    root["search_step_seconds"] = plan.stepSeconds();
    llvm::json::Array rescored;
    for (const auto &[spec, seconds] : timeline->candidates)
      rescored.push_back(llvm::json::Object{{"layout", spec},
                                            {"step_seconds", seconds}});
    root["timeline_rescored"] = std::move(rescored);
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
