//===- WeightExport.cpp - trained weights back into an ONNX file ----------===//
#include "WeightExport.h"

#include "OnnxWeights.h"

#include <sys/stat.h>

namespace frenzy::rt {

ParamValues heldParameters(Executor &ex) {
  ParamValues out;
  for (const plan::ParamSource &p : ex.program().params()) {
    const Tensor &t = ex.tensor(p.tensor());
    if (p.trainable() && !t.storage.empty())
      out[p.name()].assign(t.f32(), t.f32() + t.numel());
  }
  return out;
}

static bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void exportWeights(const plan::Plan &plan, const ParamValues &values,
                   const std::string &out) {
  if (sameFile(out, plan.model_path()))
    throw RuntimeError(out + " is the plan's model; export to another file");
  OnnxWeights model(plan.model_path());
  for (const plan::ParamSource &p : plan.program().params()) {
    if (!p.trainable())
      continue;
    auto it = values.find(p.name());
    const plan::Tensor &t = plan.program().tensors(p.tensor());
    int64_t n = 1;
    for (int64_t d : t.shape())
      n *= d;
    if (p.shard_size() == 3) // a TP share: the export holds the whole value
      n *= p.shard(1);
    if (it == values.end() || int64_t(it->second.size()) != n)
      throw RuntimeError("export: no trained value of parameter '" + p.name() +
                         "'");
    model.store(p, it->second.data(), n * int64_t(sizeof(float)));
  }
  model.write(out);
}

} // namespace frenzy::rt
