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
#include "plan/PlanPrograms.h"

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

/// A parameter as the updating stage of one pipeline holds it.
struct Holder {
  const plan::StageProgram *sp;
  const plan::ParamSource *source;
  int32_t grad;
  int64_t degree() const { return sp->ranks_size(); }
};

/// DP groups for one parameter updated in several pipelines. Lane j of D
/// (the largest TP degree among them) is the j-th shard at degree D: the
/// rank of a degree-d pipeline holding it is its TP index j * d / D, which
/// holds D / d lanes of the parameter (all D when unsplit). A parameter no
/// program splits is one piece per rank, reduced once per lane (a rank in
/// several lanes gets the same sum from each). Uniform degrees give lane j
/// = TP index j with whole tensors.
static void addLanes(const std::vector<Holder> &hs,
                     std::map<std::vector<int32_t>,
                              std::vector<std::vector<plan::Piece>>> &dp) {
  int64_t D = 1;
  const plan::ParamSource *split = nullptr;
  for (const Holder &h : hs) {
    D = std::max(D, h.degree());
    if (h.source->shard_size() == 3)
      split = h.source;
  }
  for (int64_t j = 0; j < D; ++j) {
    std::vector<int32_t> ranks;
    std::vector<plan::Piece> pieces;
    for (const Holder &h : hs) {
      int64_t d = h.degree(), t = j * d / D;
      ranks.push_back(h.sp->ranks(int(t)));
      plan::Piece pc;
      pc.set_tensor(h.grad);
      pc.set_count(1);
      if (split) {
        pc.set_dim(int32_t(split->shard(0)));
        pc.set_blocks(int32_t(split->shard(2)));
        pc.set_count(int32_t(D / d));
        pc.set_index(int32_t(j - t * (D / d)));
      }
      pieces.push_back(pc);
    }
    auto &members = dp[ranks];
    members.resize(ranks.size());
    for (size_t m = 0; m < ranks.size(); ++m)
      members[m].push_back(pieces[m]);
  }
}

/// DP groups (the same gradient in several pipelines), TIED groups (a
/// parameter read by a stage that does not update it) and TP groups, and
/// which rank counts each gradient in the global norm. With tensor
/// parallelism the groups are per TP index: rank j of a stage meets rank j
/// of the other pipelines' stages (the same shard, or the same replica);
/// pipelines of different TP degrees meet by lanes (addLanes).
static void addGroups(plan::Plan &out) {
  int pipelines = 0;
  for (const plan::StageProgram &sp : out.stages())
    pipelines = std::max(pipelines, sp.pipeline() + 1);

  std::map<std::vector<int32_t>, std::vector<std::vector<plan::Piece>>> dp;
  std::map<std::vector<int32_t>, std::vector<int32_t>> tied;
  std::map<std::string, std::vector<Holder>> holders; // by parameter name
  for (int p = 0; p < pipelines; ++p) {
    std::map<int32_t, const plan::StageProgram *> updater;
    std::map<int32_t, std::set<const plan::StageProgram *>> readers;
    const plan::Program *prog = nullptr;
    for (const plan::StageProgram &sp : out.stages()) {
      if (sp.pipeline() != p)
        continue;
      prog = plan::programAt(out, sp.program());
      for (int32_t i : sp.update_instrs())
        if (prog->instrs(i).op() != "clip_grad_norm")
          updater[prog->instrs(i).inputs(0)] = &sp;
      for (auto *list : {&sp.forward_instrs(), &sp.backward_instrs()})
        for (int32_t i : *list)
          for (int32_t t : prog->instrs(i).inputs())
            if (prog->tensors(t).kind() == plan::PARAM)
              readers[t].insert(&sp);
    }
    if (!prog)
      continue;
    std::map<int32_t, int32_t> gradOf; // param -> grad
    for (const plan::Instr &in : prog->instrs())
      if (in.op() == "adamw_update" || in.op() == "sgd_update")
        gradOf[in.inputs(0)] = in.inputs(1);
    std::map<int32_t, const plan::ParamSource *> source;
    for (const plan::ParamSource &ps : prog->params())
      source[ps.tensor()] = &ps;
    for (auto &[param, sp] : updater) {
      const plan::ParamSource *ps = source[param];
      if (!ps)
        continue;
      holders[ps->name()].push_back({sp, ps, gradOf[param]});
      for (int j = 0; j < sp->ranks_size(); ++j) {
        int32_t r = sp->ranks(j);
        if (p == 0 && (j == 0 || ps->shard_size() > 0))
          out.mutable_ranks(r)->add_norm_tensors(gradOf[param]);
        std::vector<int32_t> group = {r};
        for (const plan::StageProgram *reader : readers[param])
          if (reader != sp && j < reader->ranks_size())
            group.push_back(reader->ranks(j));
        if (group.size() > 1)
          tied[group].push_back(param);
      }
    }
  }
  for (auto &[name, hs] : holders)
    if (hs.size() > 1)
      addLanes(hs, dp);
  for (auto &[ranks, members] : dp) {
    plan::CommGroup *g = out.add_groups();
    g->set_kind(plan::CommGroup::DP);
    for (size_t m = 0; m < ranks.size(); ++m) {
      g->add_ranks(ranks[m]);
      plan::Member *mem = g->add_members();
      mem->set_rank(ranks[m]);
      for (const plan::Piece &pc : members[m])
        *mem->add_pieces() = pc;
    }
  }
  auto add = [&](plan::CommGroup::Kind kind, const std::vector<int32_t> &r,
                 const std::vector<int32_t> &tensors) {
    plan::CommGroup *g = out.add_groups();
    g->set_kind(kind);
    for (int32_t x : r)
      g->add_ranks(x);
    for (int32_t t : tensors)
      g->add_tensors(t);
  };
  for (auto &[r, t] : tied)
    add(plan::CommGroup::TIED, r, t);
  for (const plan::StageProgram &sp : out.stages())
    if (sp.ranks_size() > 1)
      add(plan::CommGroup::TP, {sp.ranks().begin(), sp.ranks().end()}, {});
}

std::optional<std::vector<int64_t>>
frenzy::pipelineTpDegrees(const PartitionPlan &pp) {
  std::vector<int64_t> degrees;
  for (const Pipeline &p : pp.pipelines) {
    int64_t tp = p.stages.empty() ? 1 : p.stages.front().tp();
    for (const Stage &st : p.stages)
      if (st.tp() != tp)
        return std::nullopt;
    degrees.push_back(tp);
  }
  return degrees;
}

/// The program a stage of TP degree `tp` runs: the one split for it, else
/// Plan.program (the runtime refuses a stage whose rank count differs).
static int32_t programFor(const plan::Plan &out, int64_t tp) {
  for (int32_t k = 1; k <= out.more_programs_size(); ++k)
    if (plan::tpDegree(out.more_programs(k - 1)) == tp)
      return k;
  return 0;
}

void frenzy::addStagePrograms(const PartitionPlan &pp,
                              const ClusterSpec &cluster,
                              const PartitionOptions &o,
                              const ScheduleOrders &schedule,
                              plan::Plan &out) {
  out.set_micro_batch(pp.microBatch);
  out.set_global_batch(o.globalBatch);
  out.set_predicted_step_seconds(pp.stepSeconds());
  out.clear_devices();
  // Which instruction produces each tensor, per program (computed once:
  // a plan has hundreds of stages and a handful of programs).
  std::vector<std::vector<int>> producers(out.more_programs_size() + 1);
  for (size_t k = 0; k < producers.size(); ++k) {
    const plan::Program &prog = *plan::programAt(out, int32_t(k));
    producers[k].assign(prog.tensors_size(), -1);
    for (int i = 0; i < prog.instrs_size(); ++i)
      for (int32_t t : prog.instrs(i).outputs())
        producers[k][t] = i;
  }
  int32_t rankId = 0;
  int64_t firstMicroBatch = 0;
  for (size_t p = 0; p < pp.pipelines.size(); ++p) {
    const Pipeline &pipe = pp.pipelines[p];
    for (size_t s = 0; s < pipe.stages.size(); ++s) {
      const Stage &st = pipe.stages[s];
      const ClusterNode &node = cluster.nodes[st.node];
      plan::StageProgram *sp = out.add_stages();
      sp->set_program(programFor(out, st.tp()));
      const plan::Program &prog = *plan::programAt(out, sp->program());
      const std::vector<int> &producer = producers[sp->program()];
      sp->set_pipeline(int32_t(p));
      sp->set_stage(int32_t(s));
      sp->set_first_layer(st.firstLayer);
      sp->set_last_layer(st.lastLayer);
      sp->set_embed(st.embed);
      sp->set_head(st.head);
      sp->set_micro_batches(pipe.microBatches);
      sp->set_first_micro_batch(firstMicroBatch);
      sp->set_predicted_seconds(st.seconds);
      sp->set_recompute_forward(st.fullRecompute);
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
