//===- CommGroups.cpp - which ranks sum, share and split what -------------===//
//
// DP groups (the same gradient in several pipelines), TIED groups (a
// parameter read by a stage that does not update it) and TP groups, and
// which rank counts each gradient in the global norm. With tensor
// parallelism the groups are per TP index: rank j of a stage meets rank j
// of the other pipelines' stages (the same shard, or the same replica);
// pipelines of different TP degrees meet by lanes (addLanes). One
// parameter can live in differently cut stages of different pipelines.
//
//===----------------------------------------------------------------------===//
#include "PlanParts.h"

#include <map>
#include <set>

using namespace frenzy;
using namespace frenzy::target;

namespace {
/// A parameter as the updating stage of one pipeline holds it.
struct Holder {
  const StageWork *sw;
  const plan::ParamSource *source;
  int32_t grad;
  int64_t degree() const { return int64_t(sw->ranks.size()); }
};
using Pieces = std::map<std::vector<int32_t>,
                        std::vector<std::vector<plan::Piece>>>;
} // namespace

/// DP groups for one parameter updated in several pipelines. Lane j of D
/// (the largest TP degree among them) is the j-th shard at degree D: the
/// rank of a degree-d pipeline holding it is its TP index j * d / D, which
/// holds D / d lanes of the parameter (all D when unsplit). A parameter no
/// program splits is one piece per rank, reduced once per lane (a rank in
/// several lanes gets the same sum from each). Uniform degrees give lane j
/// = TP index j with whole tensors.
static void addLanes(const std::vector<Holder> &hs, Pieces &dp) {
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
      ranks.push_back(h.sw->ranks[size_t(t)]);
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

void target::commGroups(const LoweredPrograms &lowered, PlacedPlan &out) {
  out.normTensors.assign(size_t(out.ranks), {});
  Pieces dp;
  std::map<std::vector<int32_t>, std::vector<int32_t>> tied;
  std::map<std::string, std::vector<Holder>> holders; // by parameter name
  for (size_t p = 0; p < out.pipelines.size(); ++p) {
    const PipelineWork &pw = out.pipelines[p];
    if (pw.stages.empty())
      continue;
    const plan::Program &prog =
        lowered.programs[size_t(pw.stages.front().program)];
    // Readers in stage order: a TIED group lists the updater, then them.
    std::map<int32_t, const StageWork *> updater;
    std::map<int32_t, std::vector<const StageWork *>> readers;
    for (const StageWork &sw : pw.stages) {
      for (int32_t i : sw.update)
        if (prog.instrs(i).op() != "clip_grad_norm")
          updater[prog.instrs(i).inputs(0)] = &sw;
      for (const auto *list : {&sw.forward, &sw.backward})
        for (int32_t i : *list)
          for (int32_t t : prog.instrs(i).inputs())
            if (prog.tensors(t).kind() == plan::PARAM &&
                (readers[t].empty() || readers[t].back() != &sw))
              readers[t].push_back(&sw);
    }
    std::map<int32_t, int32_t> gradOf; // param -> grad
    for (const plan::Instr &in : prog.instrs())
      if (in.op() == "adamw_update" || in.op() == "sgd_update")
        gradOf[in.inputs(0)] = in.inputs(1);
    std::map<int32_t, const plan::ParamSource *> source;
    for (const plan::ParamSource &ps : prog.params())
      source[ps.tensor()] = &ps;
    for (auto &[param, sw] : updater) {
      const plan::ParamSource *ps = source[param];
      if (!ps)
        continue;
      holders[ps->name()].push_back({sw, ps, gradOf[param]});
      for (size_t j = 0; j < sw->ranks.size(); ++j) {
        int32_t r = sw->ranks[j];
        if (p == 0 && (j == 0 || ps->shard_size() > 0))
          out.normTensors[size_t(r)].push_back(gradOf[param]);
        std::vector<int32_t> group = {r};
        for (const StageWork *reader : readers[param])
          if (reader != sw && j < reader->ranks.size())
            group.push_back(reader->ranks[j]);
        if (group.size() > 1)
          tied[group].push_back(param);
      }
    }
  }
  for (auto &[name, hs] : holders)
    if (hs.size() > 1)
      addLanes(hs, dp);
  for (auto &[ranks, members] : dp) {
    plan::CommGroup &g = out.groups.emplace_back();
    g.set_kind(plan::CommGroup::DP);
    for (size_t m = 0; m < ranks.size(); ++m) {
      g.add_ranks(ranks[m]);
      plan::Member *mem = g.add_members();
      mem->set_rank(ranks[m]);
      for (const plan::Piece &pc : members[m])
        *mem->add_pieces() = pc;
    }
  }
  auto add = [&](plan::CommGroup::Kind kind, const std::vector<int32_t> &r,
                 const std::vector<int32_t> &tensors) {
    plan::CommGroup &g = out.groups.emplace_back();
    g.set_kind(kind);
    for (int32_t x : r)
      g.add_ranks(x);
    for (int32_t t : tensors)
      g.add_tensors(t);
  };
  for (auto &[r, t] : tied)
    add(plan::CommGroup::TIED, r, t);
  for (const PipelineWork &pw : out.pipelines)
    for (const StageWork &sw : pw.stages)
      if (sw.ranks.size() > 1)
        add(plan::CommGroup::TP, sw.ranks, {});
}
