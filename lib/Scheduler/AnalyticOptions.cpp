//===- AnalyticOptions.cpp - option tables from a model's sizes ------------===//
//
// For jobs given as a model summary (no ONNX file), and for trace jobs: the
// closed forms below stand in for the memory model and the partitioner,
// which need the compiled graph. Memory per rank: bf16 weights and
// gradients (4 bytes/param) plus fp32 master weights and Adam moments
// (12 bytes/param, ZeRO-1 shards them over DP); selective-recompute
// activations of 34*s*b*h bytes per layer and micro-batch, divided by TP
// with sequence parallelism (Korthikanti et al., MLSys'23), the first
// stage holding min(pp, m) micro-batches under 1F1B; fp32 logits on the
// last stage; the GPU's context and one communicator buffer per group.
// Time: 6*P*tokens + 12*L*s^2*h*B FLOPs at a fixed share of peak, a 1F1B
// bubble, TP all-reduces (4 per layer and micro-batch) on the node link,
// pipeline sends and the DP gradient ring on the node link or the network.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Options.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

int64_t ModelDesc::totalParams() const {
  return params > 0 ? params : 12 * layers * hidden * hidden + vocab * hidden;
}

namespace {

struct Sizes {
  double P, L, h, V, s, B;
  int64_t heads;
};

/// Seconds of a ring all-reduce of `bytes` over `n` ranks at `gbs` GB/s.
double ring(double bytes, int64_t n, double gbs, double eff) {
  if (n <= 1)
    return 0;
  return 2.0 * double(n - 1) / double(n) * bytes / (gbs * 1e9 * eff) + 10e-6;
}

struct Best {
  double step = 0;
  int64_t tp = 1, pp = 1, dp = 1, mb = 1, peak = 0;
};

/// The fastest layout of `n` GPUs of type `t` that fits, if any.
std::optional<Best> bestLayout(const Sizes &z, const SchedType &t, int64_t n,
                               double network, const AnalyticParams &ap) {
  std::optional<Best> best;
  const GpuType &g = t.gpu;
  double usable = double(g.memoryBytes) * (1 - ap.reserveShare);
  double flopsPerSeq = 6 * z.P * z.s + 12 * z.L * z.s * z.s * z.h;
  double embed = z.V * z.h;
  for (int64_t tp = 1; tp <= std::min<int64_t>(8, t.perNode); tp *= 2) {
    if (n % tp || z.heads % tp)
      continue;
    for (int64_t pp = 1; pp <= n / tp && pp <= int64_t(z.L); ++pp) {
      if ((n / tp) % pp)
        continue;
      int64_t dp = n / tp / pp;
      if (int64_t(z.B) % dp)
        continue;
      int64_t perReplica = int64_t(z.B) / dp;
      double layersPerStage = std::ceil(z.L / double(pp));
      double stageParams =
          layersPerStage * (z.P - embed) / z.L + (pp == 1 ? embed : embed / 2);
      double state = stageParams / tp * (4.0 + 12.0 / double(dp));
      int groups = (tp > 1) + (pp > 1) + (dp > 1);
      double overhead =
          double(g.contextBytes) + double(g.workspaceBytes) +
          double(groups * g.commBufferBytes);
      bool acrossNodes = n > t.perNode;
      double dpLink = acrossNodes ? network : t.intraGBs;
      double ppLink = tp * pp > t.perNode ? network : t.intraGBs;
      for (int64_t mb = 1; mb <= perReplica && mb <= 16; mb *= 2) {
        if (perReplica % mb)
          continue;
        int64_t m = perReplica / mb;
        double act = 34.0 * z.s * double(mb) * z.h / double(tp) *
                     layersPerStage * double(std::min(pp, m));
        double logits = 4.0 * z.s * double(mb) * z.V / double(tp);
        double peak = state + act + logits + overhead;
        if (peak > usable)
          continue;
        double compute = flopsPerSeq * double(mb) / double(pp * tp) /
                         (g.tensorTflops * 1e12 * ap.matmulEfficiency);
        double actBytes = 2.0 * z.s * double(mb) * z.h;
        double tpComm = tp > 1 ? 4 * layersPerStage *
                                     ring(actBytes, tp, t.intraGBs,
                                          ap.networkEfficiency)
                               : 0;
        double send = pp > 1 ? 2 * actBytes / (ppLink * 1e9 *
                                               ap.networkEfficiency)
                             : 0;
        double pipeline = double(m + pp - 1) * (compute + tpComm + send);
        double grads = 2.0 * stageParams / double(tp);
        double allReduce = ring(grads, dp, dpLink, ap.networkEfficiency);
        double optimizer = 16.0 * stageParams / double(tp * dp) /
                           (g.memoryGBs * 1e9 * 0.7);
        double step = pipeline + allReduce + optimizer;
        if (!best || step < best->step)
          best = Best{step, tp, pp, dp, mb, int64_t(peak)};
      }
    }
  }
  return best;
}

std::vector<int64_t> candidateCounts(const SchedType &t) {
  std::vector<int64_t> counts;
  for (int64_t n = 1; n <= t.total; n *= 2)
    counts.push_back(n);
  for (int64_t n = t.perNode; n <= t.total; n += t.perNode)
    counts.push_back(n);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

} // namespace

std::vector<JobOption> frenzy::sched::analyticOptions(const ModelDesc &m,
                                                      int64_t globalBatch,
                                                      int64_t seq,
                                                      const SchedCluster &c,
                                                      const AnalyticParams &p) {
  Sizes z{double(m.totalParams()), double(std::max<int64_t>(1, m.layers)),
          double(m.hidden),        double(m.vocab),
          double(seq),             double(globalBatch),
          std::max<int64_t>(1, m.heads)};
  std::vector<JobOption> out;
  // Per type: the best layout per count, keeping a count only when it is
  // faster than every smaller one (a slower larger option is never chosen).
  std::vector<std::vector<size_t>> perType(c.types().size());
  for (size_t ti = 0; ti < c.types().size(); ++ti) {
    const SchedType &t = c.types()[ti];
    double fastest = INFINITY;
    for (int64_t n : candidateCounts(t)) {
      std::optional<Best> b = bestLayout(z, t, n, c.interNodeGBs(), p);
      if (!b || b->step >= fastest * 0.98)
        continue;
      fastest = b->step;
      JobOption o;
      o.gpus = {{int(ti), n, b->tp}};
      o.tp = b->tp, o.pp = b->pp, o.dp = b->dp;
      o.stepSeconds = b->step;
      o.peakBytes = b->peak;
      o.layout = llvm::formatv("{0}x{1} tp{2} pp{3} dp{4} mb{5}", t.gpu.name,
                               n, b->tp, b->pp, b->dp, b->mb);
      perType[ti].push_back(out.size());
      out.push_back(std::move(o));
    }
  }
  // Two-type mixes: data-parallel replicas of each type's own layout, the
  // global batch split in proportion to their speeds (asymmetric DP, as the
  // partitioner does), plus one gradient all-reduce over the network.
  for (size_t a = 0; a < perType.size(); ++a)
    for (size_t b = a + 1; b < perType.size(); ++b)
      for (size_t ia : perType[a])
        for (size_t ib : perType[b]) {
          const JobOption &oa = out[ia], &ob = out[ib];
          if (oa.gpus[0].count > p.maxMixedPerType ||
              ob.gpus[0].count > p.maxMixedPerType)
            continue;
          double rate = 1 / oa.stepSeconds + 1 / ob.stepSeconds;
          double grads =
              2.0 * z.P / double(std::min(oa.tp * oa.pp, ob.tp * ob.pp));
          double step = 1 / rate + ring(grads, 2, c.interNodeGBs(),
                                        p.networkEfficiency);
          if (step >= std::min(oa.stepSeconds, ob.stepSeconds))
            continue;
          JobOption o;
          o.gpus = {oa.gpus[0], ob.gpus[0]};
          o.tp = std::max(oa.tp, ob.tp);
          o.pp = oa.pp, o.dp = oa.dp + ob.dp;
          o.stepSeconds = step;
          o.peakBytes = std::max(oa.peakBytes, ob.peakBytes);
          o.layout = "{" + oa.layout + "} + {" + ob.layout + "}";
          out.push_back(std::move(o));
        }
  return out;
}
