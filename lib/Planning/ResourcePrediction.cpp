//===- ResourcePrediction.cpp - how many GPUs of which type ---------------===//
//
// Exhaustive over a small space per GPU type: TP in {1, 2, 4, 8} within a
// node, PP dividing the remaining GPUs (at most one layer per stage), DP the
// rest; the global batch split evenly over DP; micro-batches that divide the
// per-replica batch; ZeRO 0-3 (with DP > 1); recompute none, selective,
// full; sequence parallelism with TP. Layers are split evenly over stages
// (earlier stages take the remainder), embedding on the first stage, head
// on the last; under 1F1B stage s of p holds min(p - s, m) micro-batches.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/ResourcePrediction.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace frenzy;

namespace {

} // namespace

void frenzy::evaluateLayout(const MemoryModel &m, const MemoryOverheads &o,
                            Layout &l) {
  int64_t layers = m.numLayers(), first = 0;
  l.peakBytes = 0;
  for (int64_t s = 0; s < l.pp; ++s) {
    int64_t n = layers / l.pp + (s < layers % l.pp ? 1 : 0);
    StageQuery q;
    q.firstLayer = first;
    q.lastLayer = first + n - 1;
    first += n;
    q.embed = s == 0;
    q.head = s == l.pp - 1;
    q.microBatch = l.microBatch;
    q.tp = l.tp;
    q.sequenceParallel = l.sequenceParallel;
    q.dp = l.dp;
    q.zeroStage = l.zero;
    q.recompute = l.recompute;
    q.inFlight = std::min(l.pp - s, l.microBatches);
    int64_t bytes = m.query(q, o).total();
    if (bytes > l.peakBytes) {
      l.peakBytes = bytes;
      l.worstStage = int(s);
    }
  }
}

namespace {

/// Cheaper layouts first: fewer GPUs, less recomputation, less ZeRO
/// communication, larger micro-batches, fewer stages.
bool better(const Layout &a, const Layout &b) {
  auto cost = [](const Layout &l) {
    int rc = l.recompute == Recompute::None        ? 0
             : l.recompute == Recompute::Selective ? 1
                                                   : 2;
    return std::make_tuple(l.gpus(), rc, l.zero, -l.microBatch, l.pp, l.tp,
                           l.peakBytes);
  };
  return cost(a) < cost(b);
}

} // namespace

llvm::Expected<std::vector<TypePrediction>>
frenzy::predictResources(const MemoryModel &model, const ClusterSpec &cluster,
                         const PredictOptions &options) {
  std::vector<TypePrediction> out;
  for (const ClusterNode &node : cluster.nodes) {
    const GpuType *g = cluster.gpuType(node.gpu);
    if (!g)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "node '%s': unknown GPU type '%s'; known types: %s",
          node.name.c_str(), node.gpu.c_str(), gpuTypeNames().c_str());
    auto it = llvm::find_if(
        out, [&](const TypePrediction &p) { return p.gpu.name == g->name; });
    if (it == out.end()) {
      out.push_back({});
      it = out.end() - 1;
      it->gpu = *g;
    }
    it->available += node.count;
    it->perNode = std::max(it->perNode, node.count);
  }

  const Recompute modes[] = {Recompute::None, Recompute::Selective,
                             Recompute::Full};
  for (TypePrediction &p : out) {
    if (model.precision() == Precision::BF16Mixed && !p.gpu.bf16) {
      p.unsupported = "no bf16 tensor cores; plan with --precision=fp16-mixed";
      continue;
    }
    MemoryOverheads o;
    o.contextBytes = p.gpu.contextBytes;
    o.ncclBytes = p.gpu.commBufferBytes;
    o.workspaceBytes = p.gpu.workspaceBytes;
    for (int64_t n = 1; n <= p.available && !p.minGpus; ++n) {
      for (int64_t tp : {1, 2, 4, 8}) {
        if (tp > p.perNode || n % tp)
          continue;
        for (int64_t pp = 1; pp <= n / tp; ++pp) {
          if ((n / tp) % pp || pp > std::max<int64_t>(1, model.numLayers()))
            continue;
          int64_t dp = n / tp / pp;
          if (options.globalBatch % dp)
            continue;
          int64_t perReplica = options.globalBatch / dp;
          for (int64_t mb = 1; mb <= perReplica; mb *= 2) {
            if (perReplica % mb)
              continue;
            for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero)
              for (Recompute r : modes) {
                Layout l;
                l.tp = tp;
                l.pp = pp;
                l.dp = dp;
                l.microBatch = mb;
                l.microBatches = perReplica / mb;
                l.zero = zero;
                l.recompute = r;
                l.sequenceParallel = tp > 1;
                evaluateLayout(model, o, l);
                if (l.peakBytes < p.smallestNeed) {
                  p.smallestNeed = l.peakBytes;
                  p.smallestLayout = l;
                }
                if (l.peakBytes <= p.gpu.memoryBytes) {
                  p.minGpus = n;
                  p.layouts.push_back(l);
                }
              }
          }
        }
      }
    }
    std::sort(p.layouts.begin(), p.layouts.end(), better);
    if (int64_t(p.layouts.size()) > options.maxLayouts)
      p.layouts.resize(options.maxLayouts);
  }
  return out;
}

static std::string gib(int64_t bytes) {
  return llvm::formatv("{0:f1} GiB", double(bytes) / double(1ll << 30)).str();
}

static std::string describe(const Layout &l) {
  return llvm::formatv("tp={0}{1} pp={2} dp={3} micro-batch={4}x{5} zero={6} "
                       "recompute={7}",
                       l.tp, l.sequenceParallel ? "+sp" : "", l.pp, l.dp,
                       l.microBatch, l.microBatches, l.zero,
                       recomputeName(l.recompute))
      .str();
}

void frenzy::printPrediction(const std::vector<TypePrediction> &pred,
                             const MemoryModel &model,
                             const PredictOptions &o, llvm::raw_ostream &os) {
  os << "global batch " << o.globalBatch << ", " << model.numLayers()
     << " layers, " << precisionName(model.precision())
     << "; layouts ranked by GPU count (no cost model yet), peak per rank "
        "of the fullest stage\n";
  for (const TypePrediction &p : pred) {
    os << "\n" << p.gpu.name << ": " << p.available << " in the cluster, "
       << gib(p.gpu.memoryBytes) << " each\n";
    if (!p.unsupported.empty()) {
      os << "  cannot run this model: " << p.unsupported << "\n";
      continue;
    }
    if (!p.minGpus) {
      os << "  does not fit on " << p.available << " GPU"
         << (p.available > 1 ? "s" : "")
         << "; the smallest per-rank need found is "
         << gib(p.smallestNeed) << " (" << describe(p.smallestLayout) << ")\n";
      continue;
    }
    os << "  minimum: " << *p.minGpus << " GPU" << (*p.minGpus > 1 ? "s" : "")
       << "\n";
    for (const Layout &l : p.layouts)
      os << "    " << describe(l) << "  peak " << gib(l.peakBytes)
         << "  headroom " << gib(p.gpu.memoryBytes - l.peakBytes) << "\n";
  }
}

void frenzy::printPredictionJson(const std::vector<TypePrediction> &pred,
                                 const MemoryModel &model,
                                 const PredictOptions &o,
                                 llvm::raw_ostream &os) {
  llvm::json::Array types;
  auto layoutJson = [](const Layout &l, int64_t capacity) {
    return llvm::json::Object{
        {"tp", l.tp},
        {"sequence_parallel", l.sequenceParallel},
        {"pp", l.pp},
        {"dp", l.dp},
        {"micro_batch", l.microBatch},
        {"micro_batches", l.microBatches},
        {"zero", l.zero},
        {"recompute", recomputeName(l.recompute).str()},
        {"gpus", l.gpus()},
        {"peak_bytes", l.peakBytes},
        {"headroom_bytes", capacity - l.peakBytes},
        {"worst_stage", l.worstStage}};
  };
  for (const TypePrediction &p : pred) {
    llvm::json::Array layouts;
    for (const Layout &l : p.layouts)
      layouts.push_back(layoutJson(l, p.gpu.memoryBytes));
    llvm::json::Object t{{"gpu", p.gpu.name},
                         {"memory_bytes", p.gpu.memoryBytes},
                         {"available", p.available},
                         {"layouts", std::move(layouts)}};
    if (p.minGpus)
      t["min_gpus"] = *p.minGpus;
    else
      t["min_gpus"] = nullptr;
    if (!p.unsupported.empty())
      t["unsupported"] = p.unsupported;
    else if (p.smallestNeed != INT64_MAX)
      t["smallest_need_bytes"] = p.smallestNeed;
    types.push_back(std::move(t));
  }
  llvm::json::Object root{{"global_batch", o.globalBatch},
                          {"layers", model.numLayers()},
                          {"precision", precisionName(model.precision()).str()},
                          {"types", std::move(types)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
