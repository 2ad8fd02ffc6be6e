//===- StagePrograms.cpp - the partition written into plan.bin ------------===//
//
// The plan's program is the whole training step at the micro-batch size;
// each stage names the instructions of its blocks split by phase (forward,
// backward, update), and the tensors that cross stage boundaries. The
// update phase includes the global gradient-norm reduction, which every
// stage runs over the gradients it owns (the runtime sums the squares over
// the plan). Communication groups say which ranks sum which gradients (one
// parameter can live in differently cut stages of different pipelines) and
// which ranks receive a tied parameter they read but do not update.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/StagePrograms.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "plan.pb.h"

#include <map>
#include <set>

using namespace frenzy;

static bool owns(const Stage &st, const plan::Instr &in) {
  if (!in.has_block())
    return true;
  int64_t b = in.block();
  if (b == BlockAttr::kEmbed)
    return st.embed;
  if (b == BlockAttr::kHead)
    return st.head;
  return b >= st.firstLayer && b <= st.lastLayer;
}

static bool isUpdate(const plan::Instr &in) {
  return in.op() == "clip_grad_norm" || in.op() == "adamw_update" ||
         in.op() == "sgd_update";
}

/// DP groups (the same gradient in several pipelines), TIED groups (a
/// parameter read by a stage that does not update it) and TP groups, and
/// which rank counts each gradient in the global norm. With tensor
/// parallelism the groups are per TP index: rank j of a stage meets rank j
/// of the other pipelines' stages (the same shard, or the same replica).
static void addGroups(plan::Plan &out) {
  const plan::Program &prog = out.program();
  std::map<int32_t, int32_t> gradOf; // param -> grad
  for (const plan::Instr &in : prog.instrs())
    if (in.op() == "adamw_update" || in.op() == "sgd_update")
      gradOf[in.inputs(0)] = in.inputs(1);
  std::set<int32_t> sharded;
  for (const plan::ParamSource &p : prog.params())
    if (p.shard_size() > 0)
      sharded.insert(p.tensor());
  int pipelines = 0;
  for (const plan::StageProgram &sp : out.stages())
    pipelines = std::max(pipelines, sp.pipeline() + 1);

  std::map<std::vector<int32_t>, std::vector<int32_t>> dp, tied;
  std::map<std::pair<int32_t, int>, std::vector<int32_t>> updaters;
  for (int p = 0; p < pipelines; ++p) {
    std::map<int32_t, const plan::StageProgram *> updater;
    std::map<int32_t, std::set<const plan::StageProgram *>> readers;
    for (const plan::StageProgram &sp : out.stages()) {
      if (sp.pipeline() != p)
        continue;
      for (int32_t i : sp.update_instrs())
        if (prog.instrs(i).op() != "clip_grad_norm")
          updater[prog.instrs(i).inputs(0)] = &sp;
      for (auto *list : {&sp.forward_instrs(), &sp.backward_instrs()})
        for (int32_t i : *list)
          for (int32_t t : prog.instrs(i).inputs())
            if (prog.tensors(t).kind() == plan::PARAM)
              readers[t].insert(&sp);
    }
    for (auto &[param, sp] : updater)
      for (int j = 0; j < sp->ranks_size(); ++j) {
        int32_t r = sp->ranks(j);
        updaters[{param, j}].push_back(r);
        if (p == 0 && (j == 0 || sharded.count(param)))
          out.mutable_ranks(r)->add_norm_tensors(gradOf[param]);
        std::vector<int32_t> group = {r};
        for (const plan::StageProgram *reader : readers[param])
          if (reader != sp && j < reader->ranks_size())
            group.push_back(reader->ranks(j));
        if (group.size() > 1)
          tied[group].push_back(param);
      }
  }
  for (auto &[key, ranks] : updaters)
    if (ranks.size() > 1)
      dp[ranks].push_back(gradOf[key.first]);
  auto add = [&](plan::CommGroup::Kind kind, const std::vector<int32_t> &r,
                 const std::vector<int32_t> &tensors) {
    plan::CommGroup *g = out.add_groups();
    g->set_kind(kind);
    for (int32_t x : r)
      g->add_ranks(x);
    for (int32_t t : tensors)
      g->add_tensors(t);
  };
  for (auto &[r, t] : dp)
    add(plan::CommGroup::DP, r, t);
  for (auto &[r, t] : tied)
    add(plan::CommGroup::TIED, r, t);
  for (const plan::StageProgram &sp : out.stages())
    if (sp.ranks_size() > 1)
      add(plan::CommGroup::TP, {sp.ranks().begin(), sp.ranks().end()}, {});
}

int64_t frenzy::uniformTpDegree(const PartitionPlan &pp) {
  int64_t tp = 0;
  for (const Pipeline &p : pp.pipelines)
    for (const Stage &st : p.stages) {
      if (tp && st.tp() != tp)
        return 1;
      tp = st.tp();
    }
  return std::max<int64_t>(tp, 1);
}

void frenzy::addStagePrograms(const PartitionPlan &pp,
                              const ClusterSpec &cluster,
                              const PartitionOptions &o,
                              PipelineSchedule schedule, plan::Plan &out) {
  const plan::Program &prog = out.program();
  // Which instruction produces each tensor.
  std::vector<int> producer(prog.tensors_size(), -1);
  for (int i = 0; i < prog.instrs_size(); ++i)
    for (int32_t t : prog.instrs(i).outputs())
      producer[t] = i;

  out.set_micro_batch(pp.microBatch);
  out.set_global_batch(o.globalBatch);
  out.set_predicted_step_seconds(pp.stepSeconds());
  out.clear_devices();
  int32_t rankId = 0;
  int64_t firstMicroBatch = 0;
  for (size_t p = 0; p < pp.pipelines.size(); ++p) {
    const Pipeline &pipe = pp.pipelines[p];
    for (size_t s = 0; s < pipe.stages.size(); ++s) {
      const Stage &st = pipe.stages[s];
      const ClusterNode &node = cluster.nodes[st.node];
      plan::StageProgram *sp = out.add_stages();
      sp->set_pipeline(int32_t(p));
      sp->set_stage(int32_t(s));
      sp->set_first_layer(st.firstLayer);
      sp->set_last_layer(st.lastLayer);
      sp->set_embed(st.embed);
      sp->set_head(st.head);
      sp->set_micro_batches(pipe.microBatches);
      sp->set_first_micro_batch(firstMicroBatch);
      sp->set_predicted_seconds(st.seconds);
      for (size_t i = 0; i < st.devices.size(); ++i) {
        plan::Rank *r = out.add_ranks();
        r->set_id(rankId);
        r->set_node(node.name);
        r->set_gpu_type(node.gpu);
        r->set_device(int32_t(st.devices[i]));
        r->set_pipeline(int32_t(p));
        r->set_stage(int32_t(s));
        r->set_tp_rank(int32_t(i));
        r->set_predicted_peak_bytes(st.peakBytes);
        if (const GpuType *g = cluster.gpuType(node.gpu))
          r->set_context_bytes(g->contextBytes);
        sp->add_ranks(rankId++);
        plan::Device *d = out.add_devices();
        d->set_node(node.name);
        d->set_gpu_type(node.gpu);
        d->set_index(int32_t(st.devices[i]));
      }
      std::set<int> mine; // forward and backward instructions
      for (int i = 0; i < prog.instrs_size(); ++i) {
        const plan::Instr &in = prog.instrs(i);
        if (!owns(st, in))
          continue;
        sp->add_instrs(i);
        if (isUpdate(in)) {
          sp->add_update_instrs(i);
          continue;
        }
        mine.insert(i);
        if (in.backward())
          sp->add_backward_instrs(i);
        else
          sp->add_forward_instrs(i);
      }
      std::set<int32_t> recv, send;
      for (int i : mine)
        for (int32_t t : prog.instrs(i).inputs())
          if (producer[t] >= 0 && !mine.count(producer[t]))
            recv.insert(t);
      for (int i = 0; i < prog.instrs_size(); ++i) {
        if (mine.count(i) || isUpdate(prog.instrs(i)))
          continue;
        for (int32_t t : prog.instrs(i).inputs())
          if (producer[t] >= 0 && mine.count(producer[t]))
            send.insert(t);
      }
      for (int32_t t : recv)
        sp->add_recv_tensors(t);
      for (int32_t t : send)
        sp->add_send_tensors(t);
    }
    firstMicroBatch += pipe.microBatches;
  }
  out.set_total_micro_batches(firstMicroBatch);
  addGroups(out);
  addPipelineSchedule(out, schedule);
}
