//===- PartitionAttrs.cpp - the partition decision as IR attributes -------===//
//
// Writes and reads back the attributes of PartitionAttrs.h. Reading checks
// every field it needs, because the IR may have been written by hand or by
// an older frenzy-opt: a missing or ill-typed field is one diagnostic that
// names it, never a crash in the plan writer.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <set>

using namespace mlir;
using namespace frenzy;

namespace {

/// Builds one dictionary attribute field by field.
struct Dict {
  Builder b;
  SmallVector<NamedAttribute> fields;
  explicit Dict(MLIRContext *ctx) : b(ctx) {}
  Dict &i64(StringRef k, int64_t v) { return add(k, b.getI64IntegerAttr(v)); }
  Dict &f64(StringRef k, double v) { return add(k, b.getF64FloatAttr(v)); }
  Dict &str(StringRef k, StringRef v) { return add(k, b.getStringAttr(v)); }
  Dict &flag(StringRef k, bool v) { return add(k, b.getBoolAttr(v)); }
  Dict &ints(StringRef k, ArrayRef<int64_t> v) {
    return add(k, b.getDenseI64ArrayAttr(v));
  }
  Dict &add(StringRef k, Attribute v) {
    fields.push_back(b.getNamedAttr(k, v));
    return *this;
  }
  DictionaryAttr get() { return b.getDictionaryAttr(fields); }
};

/// Reads fields of one dictionary; the first missing or ill-typed one is
/// reported (with `where`, e.g. "pipelines[1].stages[0]") and sticks.
struct Reader {
  ModuleOp module;
  bool ok = true;

  bool fail(StringRef where, StringRef key, StringRef what) {
    if (ok)
      emitError(module.getLoc())
          << kPartitionAttrName << ": " << where << (where.empty() ? "" : ".")
          << key << " " << what;
    ok = false;
    return false;
  }
  template <typename A>
  A get(DictionaryAttr d, StringRef where, StringRef key, StringRef type) {
    auto a = d ? d.getAs<A>(key) : A();
    if (!a)
      fail(where, key, ("is missing or not " + type).str());
    return a;
  }
  int64_t i64(DictionaryAttr d, StringRef where, StringRef key) {
    auto a = get<IntegerAttr>(d, where, key, "an integer");
    return a ? a.getInt() : 0;
  }
  double f64(DictionaryAttr d, StringRef where, StringRef key) {
    auto a = get<FloatAttr>(d, where, key, "a float");
    return a ? a.getValueAsDouble() : 0;
  }
  bool flag(DictionaryAttr d, StringRef where, StringRef key) {
    auto a = get<BoolAttr>(d, where, key, "true or false");
    return a && a.getValue();
  }
  std::string str(DictionaryAttr d, StringRef where, StringRef key) {
    auto a = get<StringAttr>(d, where, key, "a string");
    return a ? a.str() : "";
  }
  ArrayRef<int64_t> ints(DictionaryAttr d, StringRef where, StringRef key) {
    auto a = get<DenseI64ArrayAttr>(d, where, key, "array<i64: ...>");
    return a ? a.asArrayRef() : ArrayRef<int64_t>();
  }
  ArrayAttr array(DictionaryAttr d, StringRef where, StringRef key) {
    return get<ArrayAttr>(d, where, key, "an array");
  }
};

bool owns(const Stage &st, int64_t block) {
  if (block == BlockAttr::kEmbed)
    return st.embed;
  if (block == BlockAttr::kHead)
    return st.head;
  return block >= st.firstLayer && block <= st.lastLayer;
}

} // namespace

void frenzy::recordPartition(ModuleOp module, const RecordedPartition &rec,
                             const ClusterSpec *cluster) {
  MLIRContext *ctx = module.getContext();
  const PartitionPlan &pp = rec.plan;
  SmallVector<Attribute> pipelines;
  for (const Pipeline &p : pp.pipelines) {
    SmallVector<Attribute> stages;
    for (const Stage &st : p.stages) {
      Dict d(ctx);
      if (cluster && st.node >= 0 && size_t(st.node) < cluster->nodes.size())
        d.str("gpu", cluster->nodes[size_t(st.node)].gpu);
      // Written only when set, so IR without recomputation reads as before.
      if (st.fullRecompute)
        d.flag("full_recompute", true);
      if (st.activationBytes)
        d.i64("activation_bytes", st.activationBytes);
      if (st.forwardSeconds > 0)
        d.f64("forward_seconds", st.forwardSeconds);
      if (st.transferSeconds > 0)
        d.f64("transfer_seconds", st.transferSeconds);
      stages.push_back(d.i64("node", st.node)
                           .ints("devices", st.devices)
                           .ints("layers", {st.firstLayer, st.lastLayer})
                           .i64("tp", st.tp())
                           .flag("embed", st.embed)
                           .flag("head", st.head)
                           .f64("seconds", st.seconds)
                           .i64("peak_bytes", st.peakBytes)
                           .get());
    }
    pipelines.push_back(Dict(ctx)
                            .i64("micro_batches", p.microBatches)
                            .i64("sequences", p.microBatches * pp.microBatch)
                            .f64("stage_seconds", p.stageSeconds)
                            .add("stages", ArrayAttr::get(ctx, stages))
                            .get());
  }
  // Unused GPUs and why: the report explains every one.
  SmallVector<Attribute> idle;
  for (const IdleGpus &i : pp.idle)
    idle.push_back(Dict(ctx)
                       .i64("node", i.node)
                       .ints("devices", i.devices)
                       .str("why", i.why)
                       .get());
  const PartitionOptions &o = rec.options;
  Dict top(ctx);
  if (o.fullRecompute)
    top.i64("full_recompute", o.fullRecompute);
  if (pp.gpipe)
    top.flag("gpipe", true);
  if (!pp.scheduleNote.empty())
    top.str("schedule_note", pp.scheduleNote);
  module->setAttr(kPartitionAttrName,
                  top
                      .str("cluster", rec.clusterPath)
                      .i64("global_batch", o.globalBatch)
                      .i64("seq", o.seq)
                      .str("recompute", recomputeName(o.recompute))
                      .i64("micro_batch", pp.microBatch)
                      .flag("fixed_shares", pp.fixedShares)
                      .f64("step_seconds", pp.stepSeconds())
                      .f64("pipeline_seconds", pp.pipelineSeconds)
                      .f64("all_reduce_seconds", pp.allReduceSeconds)
                      .f64("optimizer_seconds", pp.optimizerSeconds)
                      .str("description", pp.description)
                      .add("pipelines", ArrayAttr::get(ctx, pipelines))
                      .add("idle", ArrayAttr::get(ctx, idle))
                      .get());

  // Per block, its stage and TP degree in every pipeline. Blocks are few
  // and attributes uniqued, so ops of one block share one array each.
  Builder b(ctx);
  std::map<int64_t, std::pair<Attribute, Attribute>> byBlock;
  module.walk([&](Operation *op) {
    auto block = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName);
    if (!block)
      return;
    auto [it, fresh] = byBlock.try_emplace(block.getIndex());
    if (fresh) {
      SmallVector<int64_t> stage, tp;
      for (const Pipeline &p : pp.pipelines) {
        int64_t s = 0;
        while (s < int64_t(p.stages.size()) &&
               !owns(p.stages[s], block.getIndex()))
          ++s;
        bool found = s < int64_t(p.stages.size());
        stage.push_back(found ? s : -1);
        tp.push_back(found ? p.stages[s].tp() : 0);
      }
      it->second = {b.getDenseI64ArrayAttr(stage), b.getDenseI64ArrayAttr(tp)};
    }
    op->setAttr(kStageAttrName, it->second.first);
    op->setAttr(kTpAttrName, it->second.second);
  });
}

FailureOr<std::optional<RecordedPartition>>
frenzy::readPartition(ModuleOp module) {
  auto top = module->getAttrOfType<DictionaryAttr>(kPartitionAttrName);
  if (!top) {
    if (module->hasAttr(kPartitionAttrName))
      return emitError(module.getLoc())
             << kPartitionAttrName << " is not a dictionary";
    return std::optional<RecordedPartition>();
  }
  Reader r{module};
  RecordedPartition rec;
  PartitionPlan &pp = rec.plan;
  rec.clusterPath = r.str(top, "", "cluster");
  rec.options.globalBatch = r.i64(top, "", "global_batch");
  rec.options.seq = r.i64(top, "", "seq");
  std::string recompute = r.str(top, "", "recompute");
  if (auto rc = parseRecompute(recompute))
    rec.options.recompute = *rc;
  else if (r.ok)
    r.fail("", "recompute", "must be none, selective or full");
  if (auto f = top ? top.getAs<IntegerAttr>("full_recompute") : IntegerAttr())
    rec.options.fullRecompute = int(f.getInt());
  pp.microBatch = r.i64(top, "", "micro_batch");
  pp.fixedShares = r.flag(top, "", "fixed_shares");
  pp.pipelineSeconds = r.f64(top, "", "pipeline_seconds");
  pp.allReduceSeconds = r.f64(top, "", "all_reduce_seconds");
  pp.optimizerSeconds = r.f64(top, "", "optimizer_seconds");
  pp.description = r.str(top, "", "description");
  if (auto g = top ? top.getAs<BoolAttr>("gpipe") : BoolAttr())
    pp.gpipe = g.getValue();
  if (auto n = top ? top.getAs<StringAttr>("schedule_note") : StringAttr())
    pp.scheduleNote = n.str();
  ArrayAttr pipes = r.array(top, "", "pipelines");
  for (size_t p = 0; pipes && p < pipes.size(); ++p) {
    std::string where = "pipelines[" + std::to_string(p) + "]";
    auto pd = dyn_cast<DictionaryAttr>(pipes[p]);
    Pipeline &pipe = pp.pipelines.emplace_back();
    pipe.microBatches = r.i64(pd, where, "micro_batches");
    pipe.stageSeconds = r.f64(pd, where, "stage_seconds");
    ArrayAttr stages = r.array(pd, where, "stages");
    for (size_t s = 0; stages && s < stages.size(); ++s) {
      std::string at = where + ".stages[" + std::to_string(s) + "]";
      auto sd = dyn_cast<DictionaryAttr>(stages[s]);
      Stage &st = pipe.stages.emplace_back();
      st.node = int(r.i64(sd, at, "node"));
      ArrayRef<int64_t> devices = r.ints(sd, at, "devices");
      st.devices.assign(devices.begin(), devices.end());
      ArrayRef<int64_t> layers = r.ints(sd, at, "layers");
      if (layers.size() == 2) {
        st.firstLayer = layers[0];
        st.lastLayer = layers[1];
      } else if (r.ok) {
        r.fail(at, "layers", "must be array<i64: first, last>");
      }
      st.embed = r.flag(sd, at, "embed");
      st.head = r.flag(sd, at, "head");
      st.seconds = r.f64(sd, at, "seconds");
      st.peakBytes = r.i64(sd, at, "peak_bytes");
      if (auto full = sd ? sd.getAs<BoolAttr>("full_recompute") : BoolAttr())
        st.fullRecompute = full.getValue();
      if (auto a = sd ? sd.getAs<IntegerAttr>("activation_bytes")
                      : IntegerAttr())
        st.activationBytes = a.getInt();
      // Optional (written only when known): the bubble analysis' split.
      for (auto [key, field] :
           {std::pair{"forward_seconds", &st.forwardSeconds},
            std::pair{"transfer_seconds", &st.transferSeconds}})
        if (auto f = sd ? sd.getAs<FloatAttr>(key) : FloatAttr()) {
          *field = f.getValueAsDouble();
          if (r.ok && !(*field >= 0 && *field <= st.seconds))
            r.fail(at, key, "must be between 0 and the stage's seconds");
        }
      if (r.ok && st.devices.empty())
        r.fail(at, "devices", "is empty: a stage runs on at least one GPU");
    }
    if (r.ok && pipe.stages.empty())
      r.fail(where, "stages", "is empty");
  }
  ArrayAttr idle = r.array(top, "", "idle");
  for (size_t i = 0; idle && i < idle.size(); ++i) {
    std::string where = "idle[" + std::to_string(i) + "]";
    auto d = dyn_cast<DictionaryAttr>(idle[i]);
    IdleGpus &g = pp.idle.emplace_back();
    g.node = int(r.i64(d, where, "node"));
    ArrayRef<int64_t> devices = r.ints(d, where, "devices");
    g.devices.assign(devices.begin(), devices.end());
    g.why = r.str(d, where, "why");
  }
  if (!r.ok)
    return failure();
  return std::optional<RecordedPartition>(std::move(rec));
}

void frenzy::recordSchedule(ModuleOp module, const ScheduleOrders &orders) {
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  SmallVector<Attribute> pipelines;
  for (const auto &stages : orders.pipelines) {
    SmallVector<Attribute> perStage;
    for (const std::vector<PhaseStep> &order : stages) {
      std::string text;
      for (const PhaseStep &st : order)
        text += (text.empty() ? "" : " ") +
                std::string(st.backward ? "B" : "F") +
                std::to_string(st.microBatch);
      perStage.push_back(b.getStringAttr(text));
    }
    pipelines.push_back(b.getArrayAttr(perStage));
  }
  module->setAttr(kScheduleAttrName,
                  Dict(ctx)
                      .str("kind", scheduleName(orders.kind))
                      .add("pipelines", b.getArrayAttr(pipelines))
                      .get());
}

FailureOr<ScheduleOrders> frenzy::readSchedule(ModuleOp module,
                                               const PartitionPlan &plan) {
  auto fail = [&](const Twine &what) {
    return emitError(module.getLoc()) << kScheduleAttrName << ": " << what;
  };
  auto top = module->getAttrOfType<DictionaryAttr>(kScheduleAttrName);
  if (!top)
    return fail("missing: run frenzy-pipeline-schedule after "
                "frenzy-partition");
  ScheduleOrders out;
  auto kind = top.getAs<StringAttr>("kind");
  std::optional<PipelineSchedule> parsed =
      kind ? parseScheduleName(kind.getValue()) : std::nullopt;
  if (!parsed)
    return fail("kind must be \"1f1b\" or \"gpipe\"");
  out.kind = *parsed;
  auto pipes = top.getAs<ArrayAttr>("pipelines");
  if (!pipes || pipes.size() != plan.pipelines.size())
    return fail("pipelines must hold one array per pipeline of " +
                Twine(kPartitionAttrName) + " (" +
                Twine(plan.pipelines.size()) + ")");
  for (size_t p = 0; p < pipes.size(); ++p) {
    const Pipeline &pipe = plan.pipelines[p];
    auto stages = dyn_cast<ArrayAttr>(pipes[p]);
    if (!stages || stages.size() != pipe.stages.size())
      return fail("pipelines[" + Twine(p) +
                  "] must hold one string per stage (" +
                  Twine(pipe.stages.size()) + ")");
    auto &orders = out.pipelines.emplace_back();
    for (size_t s = 0; s < stages.size(); ++s) {
      std::string where =
          "pipelines[" + std::to_string(p) + "][" + std::to_string(s) + "]";
      auto text = dyn_cast<StringAttr>(stages[s]);
      if (!text)
        return fail(where + " is not a string");
      std::vector<PhaseStep> &order = orders.emplace_back();
      std::set<int64_t> forwarded, done;
      SmallVector<StringRef> words;
      text.getValue().split(words, ' ', -1, false);
      for (StringRef w : words) {
        int64_t mb;
        bool backward = w.starts_with("B");
        if (!(backward || w.starts_with("F")) ||
            w.drop_front().getAsInteger(10, mb) || mb < 0 ||
            mb >= pipe.microBatches)
          return fail(where + ": '" + w +
                      "' is not F<k> or B<k> with k below " +
                      Twine(pipe.microBatches));
        bool fresh = backward ? (forwarded.count(mb) && done.insert(mb).second)
                              : forwarded.insert(mb).second;
        if (!fresh)
          return fail(where + ": '" + w +
                      "' repeats, or is a backward before its forward");
        order.push_back({backward, int32_t(mb)});
      }
      if (int64_t(done.size()) != pipe.microBatches)
        return fail(where + " must run each of the " +
                    Twine(pipe.microBatches) +
                    " micro-batches forward and backward once");
    }
  }
  return out;
}

void frenzy::recordAlternatives(ModuleOp module,
                                ArrayRef<Alternative> alternatives) {
  MLIRContext *ctx = module.getContext();
  SmallVector<Attribute> list;
  for (const Alternative &a : alternatives)
    list.push_back(Dict(ctx)
                       .str("description", a.description)
                       .f64("step_seconds", a.stepSeconds)
                       .str("why", a.why)
                       .get());
  module->setAttr(kAlternativesAttrName, ArrayAttr::get(ctx, list));
}

std::vector<Alternative> frenzy::readAlternatives(ModuleOp module) {
  std::vector<Alternative> out;
  auto list = module->getAttrOfType<ArrayAttr>(kAlternativesAttrName);
  for (Attribute a : list ? list.getValue() : ArrayRef<Attribute>()) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      continue;
    Alternative alt;
    if (auto s = d.getAs<StringAttr>("description"))
      alt.description = s.str();
    if (auto f = d.getAs<FloatAttr>("step_seconds"))
      alt.stepSeconds = f.getValueAsDouble();
    if (auto s = d.getAs<StringAttr>("why"))
      alt.why = s.str();
    out.push_back(std::move(alt));
  }
  return out;
}
