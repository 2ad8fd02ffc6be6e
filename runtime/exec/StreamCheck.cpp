//===- StreamCheck.cpp - ranks, stages, groups and streams agree ----------===//
#include "StreamCheck.h"

#include "KernelContracts.h"
#include "Tensor.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <tuple>

namespace frenzy::rt {
namespace {

using Action = plan::Action;

struct Checker {
  const plan::Plan &p;
  std::vector<std::string> out;
  std::vector<int> stageOf; // by rank; -1: none
  // By stage: tensors its instructions read or write. Only those have
  // storage on its ranks (Executor), so only those may be sent, reduced,
  // counted in the norm or synced; others must be received activations.
  std::vector<std::set<int32_t>> touched;

  void add(const std::string &where, const std::string &what) {
    if (out.size() < 100)
      out.push_back(where + ": " + what);
  }
  const plan::Program &progOf(int rank) const {
    return *plan::programAt(p, p.stages(stageOf[rank]).program());
  }
  bool tensorOk(int rank, int32_t t) const {
    return t >= 0 && t < progOf(rank).tensors_size();
  }
  int64_t bytes(int rank, int32_t t) const {
    const plan::Tensor &x = progOf(rank).tensors(t);
    int64_t n = elementBytes(x.dtype());
    for (int64_t d : x.shape())
      n *= d;
    return n;
  }

  bool stages();
  void ranks();
  void groups();
  void simulate();
};

bool Checker::stages() {
  size_t before = out.size();
  int nr = p.ranks_size();
  stageOf.assign(nr, -1);
  for (int s = 0; s < p.stages_size(); ++s) {
    const plan::StageProgram &sp = p.stages(s);
    std::string w = "stage " + std::to_string(s);
    const plan::Program *prog = plan::programAt(p, sp.program());
    if (!prog) {
      add(w, "names program " + std::to_string(sp.program()));
      continue;
    }
    for (auto *list : {&sp.instrs(), &sp.forward_instrs(),
                       &sp.backward_instrs(), &sp.update_instrs()})
      for (int32_t i : *list)
        if (i < 0 || i >= prog->instrs_size()) {
          add(w, "names instruction " + std::to_string(i));
          break;
        }
    touched.resize(p.stages_size());
    for (auto *list : {&sp.forward_instrs(), &sp.backward_instrs(),
                       &sp.update_instrs()})
      for (int32_t i : *list)
        if (i >= 0 && i < prog->instrs_size())
          for (auto *ids : {&prog->instrs(i).inputs(), &prog->instrs(i).outputs()})
            touched[s].insert(ids->begin(), ids->end());
    for (auto *list : {&sp.recv_tensors(), &sp.send_tensors()})
      for (int32_t t : *list)
        if (t < 0 || t >= prog->tensors_size()) {
          add(w, "names tensor " + std::to_string(t));
          break;
        }
    if (sp.micro_batches() < 1 || sp.micro_batches() > (1 << 20) ||
        sp.first_micro_batch() < 0)
      add(w, "has " + std::to_string(sp.micro_batches()) +
                 " micro-batches from " +
                 std::to_string(sp.first_micro_batch()));
    if (sp.ranks_size() != plan::tpDegree(*prog))
      add("pipeline " + std::to_string(sp.pipeline()) + " stage " +
              std::to_string(sp.stage()),
          "runs tensor-parallel over " + std::to_string(sp.ranks_size()) +
              " ranks but its program is split for " +
              std::to_string(plan::tpDegree(*prog)) +
              " (the pipeline's stages have different TP degrees, or "
              "frenzy-opt could not split this model and said why); pin a "
              "layout with one TP degree per pipeline that the model splits "
              "for, e.g. frenzy-opt --layout=1,1 or --layout=1x2,1x2");
    for (int32_t r : sp.ranks()) {
      if (r < 0 || r >= nr) {
        add(w, "names rank " + std::to_string(r));
      } else if (stageOf[r] >= 0) {
        add(w, "rank " + std::to_string(r) + " is in two stages");
      } else {
        stageOf[r] = s;
      }
    }
  }
  for (int r = 0; r < nr; ++r)
    if (stageOf[r] < 0)
      add("rank " + std::to_string(r), "belongs to no stage");
  return out.size() == before;
}

void Checker::ranks() {
  int nr = p.ranks_size();
  for (int t = 0; t < p.side_tasks_size(); ++t) {
    const plan::SideTask &st = p.side_tasks(t);
    if (st.name().empty() || (st.kind() != "step" && st.kind() != "process") ||
        st.memory_bytes() < 0 || st.steps() < -1)
      add("side task " + std::to_string(t),
          "needs a name, kind step or process, memory >= 0 and steps >= -1");
  }
  for (int r = 0; r < nr; ++r) {
    const plan::Rank &rk = p.ranks(r);
    const plan::StageProgram &sp = p.stages(stageOf[r]);
    std::string w = "rank " + std::to_string(r);
    if (rk.id() != r)
      add(w, "has id " + std::to_string(rk.id()));
    if (rk.pipeline() != sp.pipeline() || rk.stage() != sp.stage())
      add(w, "claims pipeline " + std::to_string(rk.pipeline()) + " stage " +
                 std::to_string(rk.stage()) + " but is in stage " +
                 std::to_string(stageOf[r]));
    if (rk.tp_rank() < 0 || rk.tp_rank() >= sp.ranks_size() ||
        sp.ranks(rk.tp_rank()) != r)
      add(w, "has TP index " + std::to_string(rk.tp_rank()) +
                 ", not its place in its stage");
    const std::set<int32_t> &mine = touched[stageOf[r]];
    for (int32_t t : rk.norm_tensors())
      if (!tensorOk(r, t) || progOf(r).tensors(t).dtype() != plan::F32 ||
          !mine.count(t)) {
        add(w, "norm tensor " + std::to_string(t) + " is not an f32 tensor");
        break;
      }
    for (int i = 0; i < rk.stream_size(); ++i) {
      const Action &a = rk.stream(i);
      std::string wa = w + " action " + std::to_string(i);
      if (!Action::Kind_IsValid(a.kind())) {
        add(wa, "has unknown kind " + std::to_string(int(a.kind())));
        continue;
      }
      if (a.kind() == Action::SIDE_TASK) {
        const plan::SideTaskSlot &st = a.side_task();
        if (!a.has_side_task() || st.task() < 0 ||
            st.task() >= p.side_tasks_size())
          add(wa, "is a side-task slot of task " + std::to_string(st.task()) +
                      " but the plan has " +
                      std::to_string(p.side_tasks_size()) + " side task(s)");
        else if (!(st.duration() > 0) || !(st.start() >= 0) ||
                 !std::isfinite(st.start() + st.duration()) ||
                 st.steps() < 0 || st.memory_bytes() < 0)
          add(wa, "is a side-task slot with a start, duration, steps or "
                  "memory out of range");
        continue;
      }
      bool perMb = a.kind() <= Action::RECV;
      if (perMb && (a.micro_batch() < 0 || a.micro_batch() >= sp.micro_batches()))
        add(wa, "names micro-batch " + std::to_string(a.micro_batch()) +
                    " of " + std::to_string(sp.micro_batches()));
      bool xfer = a.kind() == Action::SEND || a.kind() == Action::RECV;
      if (xfer && (!tensorOk(r, a.tensor()) || a.peer() < 0 ||
                   a.peer() >= nr || a.peer() == r))
        add(wa, "transfers tensor " + std::to_string(a.tensor()) +
                    " with rank " + std::to_string(a.peer()));
      else if (xfer && !mine.count(a.tensor()) &&
               (a.kind() == Action::SEND ||
                progOf(r).tensors(a.tensor()).kind() != plan::ACTIVATION))
        add(wa, "transfers tensor " + std::to_string(a.tensor()) +
                    ", which none of its stage's instructions uses");
    }
  }
}

void Checker::groups() {
  int nr = p.ranks_size();
  std::set<std::set<int32_t>> tpGroups;
  for (int g = 0; g < p.groups_size(); ++g) {
    const plan::CommGroup &grp = p.groups(g);
    std::string w = "group " + std::to_string(g);
    std::set<int32_t> members(grp.ranks().begin(), grp.ranks().end());
    if (!plan::CommGroup::Kind_IsValid(grp.kind()) || members.empty() ||
        int(members.size()) != grp.ranks_size() || *members.begin() < 0 ||
        *members.rbegin() >= nr) {
      add(w, "has an unknown kind, or ranks that repeat or do not exist");
      continue;
    }
    if (grp.kind() == plan::CommGroup::TP) {
      tpGroups.insert(members);
      continue;
    }
    if (grp.kind() == plan::CommGroup::TIED) {
      for (int32_t t : grp.tensors())
        for (int32_t r : grp.ranks())
          if (!tensorOk(r, t) || !tensorOk(grp.ranks(0), t) ||
              !touched[stageOf[r]].count(t) ||
              bytes(r, t) != bytes(grp.ranks(0), t)) {
            add(w, "tied tensor " + std::to_string(t) +
                       " is missing on a rank or differs in size");
            return;
          }
      continue;
    }
    // DP: one member per rank, in order; piece k the same size on each.
    if (grp.members_size() != grp.ranks_size()) {
      add(w, "has " + std::to_string(grp.members_size()) + " members for " +
                 std::to_string(grp.ranks_size()) + " ranks");
      continue;
    }
    std::vector<int64_t> sizes;
    for (int m = 0; m < grp.members_size(); ++m) {
      const plan::Member &mem = grp.members(m);
      int32_t r = mem.rank();
      std::vector<int64_t> mine;
      if (r != grp.ranks(m)) {
        add(w, "member " + std::to_string(m) + " is not its rank");
        break;
      }
      for (const plan::Piece &pc : mem.pieces()) {
        if (!tensorOk(r, pc.tensor()) ||
            progOf(r).tensors(pc.tensor()).dtype() != plan::F32) {
          add(w, "piece of rank " + std::to_string(r) +
                     " names no f32 tensor");
          return;
        }
        const plan::Tensor &t = progOf(r).tensors(pc.tensor());
        int64_t n = bytes(r, pc.tensor()) / 4;
        if (pc.count() < 1 || pc.count() > 4096 ||
            (pc.count() > 1 &&
             (pc.dim() < 0 || pc.dim() >= t.shape_size() || pc.blocks() < 1 ||
              pc.index() < 0 || pc.index() >= pc.count() ||
              t.shape(pc.dim()) % (int64_t(pc.blocks()) * pc.count()) != 0))) {
          add(w, "malformed piece of tensor " + std::to_string(pc.tensor()) +
                     " " + describeShape(t) + " on rank " + std::to_string(r));
          return;
        }
        mine.push_back(n / pc.count());
      }
      if (m == 0)
        sizes = mine;
      else if (mine != sizes) {
        add(w, "rank " + std::to_string(r) + "'s pieces differ in size from "
                   "rank " + std::to_string(grp.ranks(0)) + "'s");
        return;
      }
    }
  }
  for (const plan::StageProgram &sp : p.stages()) {
    std::set<int32_t> rs(sp.ranks().begin(), sp.ranks().end());
    if (rs.size() > 1 && !tpGroups.count(rs))
      add("pipeline " + std::to_string(sp.pipeline()) + " stage " +
              std::to_string(sp.stage()),
          "runs on " + std::to_string(rs.size()) +
              " ranks but has no TP group of them");
  }
  for (const std::set<int32_t> &g : tpGroups)
    if (std::none_of(p.stages().begin(), p.stages().end(),
                     [&](const plan::StageProgram &sp) {
                       return std::set<int32_t>(sp.ranks().begin(),
                                                sp.ranks().end()) == g;
                     }))
      add("TP group of rank " + std::to_string(*g.begin()),
          "is not the ranks of one stage");
}

/// Runs one step of every rank's stream symbolically. Sends never block
/// (MPI_Isend) but REDUCE_GRADS and SYNC_PARAMS first wait for the rank's
/// sends to be received (waitSends); a receive waits for the matching send
/// (same peer and tensor tag, FIFO as MPI matches); a TP stage's ranks run
/// each forward and backward together (all-reduces inside); REDUCE_GRADS
/// waits for every rank sharing a DP group, SYNC_PARAMS for every rank
/// sharing a tied group, UPDATE for all ranks.
void Checker::simulate() {
  int nr = p.ranks_size();
  struct Msg {
    int32_t mb;
    int64_t bytes;
  };
  std::map<std::tuple<int, int, int32_t>, std::deque<Msg>> queue;
  std::vector<int> unreceived(nr, 0), pos(nr, 0);
  // Ranks that must meet at a collective: the connected components of the
  // groups of a kind (each rank runs its groups' collectives in plan order,
  // so overlapping groups chain their members together).
  auto component = [&](plan::CommGroup::Kind kind) {
    std::vector<int> root(nr);
    for (int r = 0; r < nr; ++r)
      root[r] = r;
    auto find = [&](int r) {
      while (root[r] != r)
        r = root[r] = root[root[r]];
      return r;
    };
    for (const plan::CommGroup &g : p.groups())
      if (g.kind() == kind)
        for (int32_t a : g.ranks())
          root[find(a)] = find(g.ranks(0));
    std::vector<std::set<int>> with(nr);
    for (int r = 0; r < nr; ++r)
      for (int q = 0; q < nr; ++q)
        if (find(q) == find(r))
          with[r].insert(q);
    return with;
  };
  std::vector<std::set<int>> dp = component(plan::CommGroup::DP),
                             tied = component(plan::CommGroup::TIED), all(nr);
  for (int r = 0; r < nr; ++r)
    for (int q = 0; q < nr; ++q)
      all[r].insert(q);
  auto at = [&](int r) -> const Action * {
    return pos[r] < p.ranks(r).stream_size() ? &p.ranks(r).stream(pos[r])
                                             : nullptr;
  };
  // Every rank of `set` is at an action of this kind (and micro-batch).
  auto together = [&](const std::set<int> &set, const Action &a, bool mb,
                      bool drained) {
    for (int q : set) {
      const Action *b = at(q);
      if (!b || b->kind() != a.kind() ||
          (mb && b->micro_batch() != a.micro_batch()) ||
          (drained && unreceived[q] > 0))
        return false;
    }
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < nr; ++r) {
      const Action *a = at(r);
      if (!a)
        continue;
      std::string w = "rank " + std::to_string(r) + " action " +
                      std::to_string(pos[r]);
      std::set<int> set;
      switch (a->kind()) {
      case Action::SEND:
        queue[{r, a->peer(), a->tensor()}].push_back(
            {a->micro_batch(), bytes(r, a->tensor())});
        ++unreceived[r];
        ++pos[r];
        progress = true;
        continue;
      case Action::RECV: {
        auto &q = queue[{a->peer(), r, a->tensor()}];
        if (q.empty())
          continue;
        Msg m = q.front();
        q.pop_front();
        --unreceived[a->peer()];
        if (m.bytes != bytes(r, a->tensor()) || m.mb != a->micro_batch()) {
          add(w, "receives tensor " + std::to_string(a->tensor()) +
                     " of micro-batch " + std::to_string(a->micro_batch()) +
                     " (" + std::to_string(bytes(r, a->tensor())) +
                     " bytes) where rank " + std::to_string(a->peer()) +
                     " sends micro-batch " + std::to_string(m.mb) + " (" +
                     std::to_string(m.bytes) + " bytes)");
          return;
        }
        ++pos[r];
        progress = true;
        continue;
      }
      case Action::FORWARD:
      case Action::BACKWARD: {
        const plan::StageProgram &sp = p.stages(stageOf[r]);
        set.insert(sp.ranks().begin(), sp.ranks().end());
        if (!together(set, *a, true, false))
          continue;
        break;
      }
      case Action::SIDE_TASK: // local to the rank: never waits
        ++pos[r];
        progress = true;
        continue;
      case Action::REDUCE_GRADS:
        set = dp[r];
        if (!together(set, *a, false, true))
          continue;
        break;
      case Action::UPDATE:
        set = all[r];
        if (!together(set, *a, false, false))
          continue;
        break;
      default: // SYNC_PARAMS
        set = tied[r];
        if (!together(set, *a, false, true))
          continue;
        break;
      }
      for (int q : set)
        ++pos[q];
      progress = true;
    }
  }
  for (int r = 0; r < nr; ++r)
    if (const Action *a = at(r)) {
      add("rank " + std::to_string(r) + " action " + std::to_string(pos[r]),
          "the ranks' streams deadlock here (kind " +
              Action::Kind_Name(a->kind()) + ", tensor " +
              std::to_string(a->tensor()) + ", peer " +
              std::to_string(a->peer()) + ")");
      return;
    }
  for (auto &[key, q] : queue)
    if (!q.empty()) {
      add("rank " + std::to_string(std::get<0>(key)),
          "sends tensor " + std::to_string(std::get<2>(key)) + " to rank " +
              std::to_string(std::get<1>(key)) + ", which never receives it");
      return;
    }
}

} // namespace

std::vector<std::string> streamViolations(const plan::Plan &p) {
  Checker c{p, {}, {}};
  if (p.stages_size() == 0 && p.ranks_size() > 1)
    c.add("plan", "has " + std::to_string(p.ranks_size()) +
                      " ranks but no stages");
  if (!c.out.empty() || !c.stages())
    return c.out;
  c.ranks();
  if (!c.out.empty())
    return c.out;
  c.groups();
  if (c.out.empty())
    c.simulate();
  return c.out;
}

} // namespace frenzy::rt
