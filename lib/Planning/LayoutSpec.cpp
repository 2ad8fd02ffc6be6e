//===- LayoutSpec.cpp - a partition given by hand (--layout) --------------===//
#include "frenzy/Planning/LayoutSpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace frenzy;

static llvm::Error bad(llvm::StringRef spec, const llvm::Twine &what) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument),
      "--layout='" + spec + "': " + what);
}

std::vector<int64_t> frenzy::layoutTpDegrees(llvm::StringRef spec) {
  std::vector<int64_t> out;
  // Stages are separated by ',' within a pipeline and '/' between them;
  // "@M" follows a pipeline's last stage.
  for (llvm::StringRef pipe : llvm::split(spec, '/'))
    for (llvm::StringRef stage : llvm::split(pipe.split('@').first, ',')) {
      int64_t tp = 0;
      if (!stage.trim().split('x').second.getAsInteger(10, tp) && tp > 1 &&
          llvm::find(out, tp) == out.end())
        out.push_back(tp);
    }
  return out;
}

std::string frenzy::formatLayout(const PartitionPlan &plan) {
  std::string s;
  for (const Pipeline &q : plan.pipelines) {
    if (!s.empty())
      s += "/";
    for (size_t i = 0; i < q.stages.size(); ++i) {
      const Stage &st = q.stages[i];
      s += (i ? "," : "") +
           std::to_string(std::max<int64_t>(0, st.lastLayer - st.firstLayer + 1));
      if (st.tp() > 1)
        s += "x" + std::to_string(st.tp());
    }
    s += "@" + std::to_string(q.microBatches);
  }
  return s;
}

llvm::Expected<PartitionPlan> frenzy::parseLayout(llvm::StringRef spec,
                                                  const ClusterSpec &cluster,
                                                  int64_t numLayers,
                                                  int64_t globalBatch) {
  PartitionPlan plan;
  std::vector<int64_t> used(cluster.nodes.size(), 0);
  int pinned = 0;
  llvm::SmallVector<llvm::StringRef> pipes;
  spec.split(pipes, '/');
  for (llvm::StringRef pipeText : pipes) {
    Pipeline pipe;
    auto [stagesText, countText] = pipeText.trim().split('@');
    if (!countText.empty()) {
      if (countText.trim().getAsInteger(10, pipe.microBatches) ||
          pipe.microBatches < 1)
        return bad(spec, "'@" + countText + "' is not a micro-batch count >= 1");
      ++pinned;
    }
    llvm::SmallVector<llvm::StringRef> stages;
    stagesText.split(stages, ',');
    int64_t layer = 0;
    for (size_t s = 0; s < stages.size(); ++s) {
      auto [layersText, tpText] = stages[s].trim().split('x');
      int64_t layers = 0, tp = 1;
      if (layersText.getAsInteger(10, layers) || layers < 0 ||
          (!tpText.empty() && (tpText.getAsInteger(10, tp) || tp < 1)))
        return bad(spec, "stage '" + stages[s] +
                             "' is not LAYERS or LAYERSxTP (e.g. 2 or 2x2)");
      Stage st;
      st.firstLayer = layer;
      st.lastLayer = layer + layers - 1;
      layer += layers;
      st.embed = s == 0;
      st.head = s + 1 == stages.size();
      size_t n = 0;
      while (n < cluster.nodes.size() && cluster.nodes[n].count - used[n] < tp)
        ++n;
      if (n == cluster.nodes.size())
        return bad(spec, "no node of the cluster has " + llvm::Twine(tp) +
                             " free devices left for stage '" + stages[s] +
                             "' (" + llvm::Twine(cluster.totalDevices()) +
                             " devices in all)");
      st.node = int(n);
      for (int64_t d = 0; d < tp; ++d)
        st.devices.push_back(used[n]++);
      pipe.stages.push_back(st);
    }
    if (layer != numLayers)
      return bad(spec, "pipeline '" + pipeText + "' has " + llvm::Twine(layer) +
                           " layers; the model has " + llvm::Twine(numLayers));
    plan.pipelines.push_back(pipe);
  }
  if (pinned != 0 && pinned != int(pipes.size()))
    return bad(spec, "give '@M' on every pipeline or on none");
  if (pinned) {
    int64_t total = 0;
    for (const Pipeline &p : plan.pipelines)
      total += p.microBatches;
    if (globalBatch % total)
      return bad(spec, llvm::Twine(total) +
                           " micro-batches do not divide the global batch " +
                           llvm::Twine(globalBatch) +
                           "; use counts summing to a divisor of it");
    plan.microBatch = globalBatch / total;
    plan.fixedShares = true;
  }
  plan.description = ("layout " + spec).str();
  return plan;
}
