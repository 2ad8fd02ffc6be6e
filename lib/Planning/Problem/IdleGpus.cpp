//===- IdleGpus.cpp - put idle GPUs to work, or say why not ---------------===//
//
// A GPU stays idle only when using it would slow the step. After the
// search, free GPUs are offered to the plan one pipeline at a time (per
// type, its best-rated template that the free GPUs can hold), each offer
// scored exactly; an offer that shortens the step is kept. Every GPU still
// idle then gets the reason: its type cannot run the step, no stage fits
// in its memory, too few are left for a pipeline, a pipeline of them would
// get no micro-batch, or adding one lengthens the step (and by how much).
//
//===----------------------------------------------------------------------===//
#include "FastSolver.h"

#include "llvm/Support/FormatVariadic.h"

#include <set>

namespace frenzy::plan {

static std::vector<std::vector<int64_t>> freeGpus(const PlanProblem &p,
                                                  const PartitionPlan &plan) {
  std::vector<std::set<int64_t>> used(p.nodes.size());
  for (const Pipeline &q : plan.pipelines)
    for (const Stage &s : q.stages)
      used[s.node].insert(s.devices.begin(), s.devices.end());
  std::vector<std::vector<int64_t>> free(p.nodes.size());
  for (size_t n = 0; n < p.nodes.size(); ++n)
    for (int64_t d = 0; d < p.nodes[n].gpus; ++d)
      if (!used[n].count(d))
        free[n].push_back(d);
  return free;
}

std::optional<PartitionPlan> FastSearch::withPipeline(
    const PartitionPlan &plan, const Template &t,
    const std::vector<std::vector<int64_t>> &freeByNode) const {
  std::vector<std::vector<int64_t>> free = freeByNode;
  PartitionPlan more = plan;
  more.idle.clear();
  Pipeline pipe;
  for (int64_t s = 0; s < t.depth(); ++s) {
    int d = t.stageDevice[s];
    Stage st;
    for (int n : groups.nodes[d])
      if (int64_t(free[n].size()) >= t.tp) {
        st.node = n;
        st.devices.assign(free[n].begin(), free[n].begin() + t.tp);
        free[n].erase(free[n].begin(), free[n].begin() + t.tp);
        break;
      }
    if (st.devices.empty())
      return std::nullopt;
    st.firstLayer = t.ranges[s].first;
    st.lastLayer = t.ranges[s].second;
    st.embed = s == 0;
    st.head = s == t.depth() - 1;
    pipe.stages.push_back(std::move(st));
  }
  more.pipelines.push_back(std::move(pipe));
  auto scored = cost.score(std::move(more));
  if (!scored) {
    llvm::consumeError(scored.takeError());
    return std::nullopt;
  }
  return std::move(*scored);
}

void FastSearch::useIdleGpus(PartitionPlan &plan) const {
  auto it = templates.find(plan.microBatch);
  static const std::vector<Template> none;
  const std::vector<Template> &ts = it == templates.end() ? none : it->second;
  int K = int(p.devices.size());
  // Per type, the homogeneous template with the best rate among those the
  // free GPUs can hold.
  auto offer = [&](int d, const std::vector<std::vector<int64_t>> &free)
      -> const Template * {
    int64_t idle = 0;
    for (int n : groups.nodes[d])
      idle += int64_t(free[n].size());
    const Template *best = nullptr;
    for (const Template &t : ts)
      if (!t.mixed && t.stageDevice[0] == d && t.totalGpus() <= idle &&
          (!best || t.bottleneck * double(t.depth()) <
                        best->bottleneck * double(best->depth())))
        best = &t;
    return best;
  };
  for (int round = 0; round < 64; ++round) {
    auto free = freeGpus(p, plan);
    std::optional<PartitionPlan> best;
    for (int d = 0; d < K; ++d)
      if (const Template *t = offer(d, free))
        if (auto more = withPipeline(plan, *t, free))
          if (more->stepSeconds() < (best ? best->stepSeconds()
                                          : plan.stepSeconds()) *
                                        (1 - 1e-9))
            best = std::move(more);
    if (!best)
      break;
    best->description = plan.description + " + idle GPUs";
    plan = std::move(*best);
  }

  // Why the rest stays idle: one reason per type.
  auto free = freeGpus(p, plan);
  std::vector<std::string> why(K);
  for (int d = 0; d < K; ++d) {
    const DeviceProfile &dev = p.devices[d];
    int64_t idle = 0;
    for (int n : groups.nodes[d])
      idle += int64_t(free[n].size());
    if (!idle)
      continue;
    auto gib = [](int64_t b) { return double(b) / double(1ll << 30); };
    bool homogeneous = false, mixed = false;
    int64_t smallest = INT64_MAX;
    for (const auto &[mb, list] : templates)
      for (const Template &t : list)
        if (t.gpus[d]) {
          (t.mixed ? mixed : homogeneous) = true;
          if (!t.mixed && mb == plan.microBatch)
            smallest = std::min(smallest, t.totalGpus());
        }
    if (!dev.unusable.empty()) {
      why[d] = dev.unusable;
    } else if (!homogeneous && !mixed) {
      why[d] = llvm::formatv("not enough memory for any stage: the smallest "
                             "stage needs {0:f1} GiB per GPU, {1} has {2:f1}",
                             gib(smallestNeed[d]), dev.name,
                             gib(dev.memoryBytes));
    } else if (!homogeneous) {
      why[d] = llvm::formatv("{0} alone cannot hold the model (a stage needs "
                             "{1:f1} GiB, it has {2:f1}); the mixed pipelines "
                             "with it that were tried were slower",
                             dev.name, gib(smallestNeed[d]),
                             gib(dev.memoryBytes));
    } else if (const Template *t = offer(d, free)) {
      auto more = withPipeline(plan, *t, free);
      double oneMicroBatch = double(t->depth()) * t->bottleneck;
      if (!more || more->pipelines.size() <= plan.pipelines.size())
        why[d] = llvm::formatv(
            "a pipeline of them ({0} stage(s), tp {1}) would take {2:f3} ms "
            "for one micro-batch, longer than the step's pipelines ({3:f3} "
            "ms): it would get no work",
            t->depth(), t->tp, oneMicroBatch * 1e3,
            plan.pipelineSeconds * 1e3);
      else {
        // Name the part of the step that grows most.
        double dPipe = more->pipelineSeconds - plan.pipelineSeconds;
        double dAr = more->allReduceSeconds - plan.allReduceSeconds;
        double dOpt = more->optimizerSeconds - plan.optimizerSeconds;
        std::string part =
            dAr >= dPipe && dAr >= dOpt
                ? llvm::formatv("the gradient all-reduce grows from {0:f3} "
                                "to {1:f3} ms",
                                plan.allReduceSeconds * 1e3,
                                more->allReduceSeconds * 1e3)
                      .str()
            : dOpt >= dPipe
                ? llvm::formatv("the optimizer step grows from {0:f3} to "
                                "{1:f3} ms (its stages hold more parameters "
                                "per GPU)",
                                plan.optimizerSeconds * 1e3,
                                more->optimizerSeconds * 1e3)
                      .str()
                : llvm::formatv("its stage would be the bottleneck: "
                                "pipelines {0:f3} -> {1:f3} ms",
                                plan.pipelineSeconds * 1e3,
                                more->pipelineSeconds * 1e3)
                      .str();
        why[d] = llvm::formatv("adding a pipeline of them ({0} stage(s), tp "
                               "{1}) lengthens the step by {2:f1}%: {3}",
                               t->depth(), t->tp,
                               100.0 * (more->stepSeconds() /
                                            plan.stepSeconds() -
                                        1),
                               part);
      }
    } else {
      why[d] = llvm::formatv("{0} idle GPU(s) are too few for a pipeline of "
                             "{1} that fits in memory (the smallest takes "
                             "{2})",
                             idle, dev.name, smallest);
    }
  }
  plan.idle.clear();
  for (size_t n = 0; n < p.nodes.size(); ++n)
    if (!free[n].empty())
      plan.idle.push_back({int(n), free[n], why[p.nodes[n].device]});
}

} // namespace frenzy::plan
