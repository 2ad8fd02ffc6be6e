//===- PipelineSchedule.cpp - per-rank instruction streams ----------------===//
//
// The schedule pass of a multi-rank plan. Per pipeline it orders each
// stage's micro-batches as GPipe (all forwards, then all backwards) or 1F1B
// (S - s - 1 warm-up forwards, then one forward one backward, then the
// remaining backwards), which bounds the micro-batches in flight on stage s
// by S - s. Around each forward or backward it puts the receives of the
// tensors that phase reads from other stages and the sends of what other
// stages read from it; a tensor crossing stages in either direction (the
// tied embedding's gradient travels from the head back to the embedding)
// is handled the same way. After the last backward: gradient reduction,
// update, tied-parameter sync. A small simulation gives each action a
// predicted start from the stages' predicted times (forward one third of a
// micro-batch's time, backward two thirds).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/StagePrograms.h"

#include "plan.pb.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace frenzy;
using llvm::StringRef;

namespace {

enum Phase { kForward = 0, kBackward = 1 };

/// A transfer of `tensor` from stage `from` to stage `to` (indices into the
/// pipeline's stages): sent after `from`'s phase `sendPhase`, received
/// before `to`'s phase `recvPhase`.
struct Transfer {
  int32_t tensor;
  size_t from, to;
  Phase sendPhase, recvPhase;
};

using StageList = std::vector<const plan::StageProgram *>;

std::vector<Transfer> transfers(const plan::Program &prog,
                                const StageList &stages) {
  std::map<int32_t, std::pair<size_t, Phase>> made; // tensor -> stage, phase
  for (size_t s = 0; s < stages.size(); ++s)
    for (Phase ph : {kForward, kBackward})
      for (int32_t i : ph == kForward ? stages[s]->forward_instrs()
                                      : stages[s]->backward_instrs())
        for (int32_t t : prog.instrs(i).outputs())
          made[t] = {s, ph};
  std::vector<Transfer> out;
  for (size_t s = 0; s < stages.size(); ++s) {
    std::set<int32_t> seen;
    for (Phase ph : {kForward, kBackward})
      for (int32_t i : ph == kForward ? stages[s]->forward_instrs()
                                      : stages[s]->backward_instrs())
        for (int32_t t : prog.instrs(i).inputs()) {
          auto it = made.find(t);
          if (it == made.end() || it->second.first == s ||
              !seen.insert(t).second)
            continue;
          out.push_back({t, it->second.first, s, it->second.second, ph});
        }
  }
  return out;
}

plan::Action action(plan::Action::Kind k, int32_t mb = 0, int32_t tensor = 0,
                    int32_t peer = 0) {
  plan::Action a;
  a.set_kind(k);
  a.set_micro_batch(mb);
  a.set_tensor(tensor);
  a.set_peer(peer);
  return a;
}

/// Predicted start of every action: ranks advance through their streams;
/// a receive waits for the sender's phase to finish.
void predictTimeline(plan::Plan &plan) {
  std::map<std::tuple<int32_t, int32_t, int32_t>, double> done; // rank,ph,mb
  std::vector<size_t> next(plan.ranks_size(), 0);
  std::vector<double> now(plan.ranks_size(), 0);
  std::map<std::pair<int32_t, int32_t>, double> stageSec;
  for (const plan::StageProgram &sp : plan.stages())
    stageSec[{sp.pipeline(), sp.stage()}] = sp.predicted_seconds();
  // Which phase of the sender produces a received tensor: the last phase
  // before the matching SEND in the sender's stream.
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>,
           std::pair<int32_t, int32_t>>
      sentAfter; // (from, to, tensor, mb) -> (phase kind, mb)
  for (const plan::Rank &r : plan.ranks()) {
    std::pair<int32_t, int32_t> last{0, 0};
    for (const plan::Action &a : r.stream()) {
      if (a.kind() == plan::Action::FORWARD ||
          a.kind() == plan::Action::BACKWARD)
        last = {int32_t(a.kind()), a.micro_batch()};
      if (a.kind() == plan::Action::SEND)
        sentAfter[{r.id(), a.peer(), a.tensor(), a.micro_batch()}] = last;
    }
  }
  bool progress = true;
  while (progress) {
    progress = false;
    for (plan::Rank &r : *plan.mutable_ranks()) {
      double sec = stageSec[{r.pipeline(), r.stage()}];
      while (next[r.id()] < size_t(r.stream_size())) {
        plan::Action &a = *r.mutable_stream(int(next[r.id()]));
        double &t = now[r.id()];
        if (a.kind() == plan::Action::RECV) {
          auto key = sentAfter[{a.peer(), r.id(), a.tensor(), a.micro_batch()}];
          auto it = done.find({a.peer(), key.first, key.second});
          if (it == done.end())
            break;
          t = std::max(t, it->second);
        }
        a.set_predicted_start(t);
        if (a.kind() == plan::Action::FORWARD) {
          t += sec / 3;
          done[{r.id(), int32_t(a.kind()), a.micro_batch()}] = t;
        } else if (a.kind() == plan::Action::BACKWARD) {
          t += 2 * sec / 3;
          done[{r.id(), int32_t(a.kind()), a.micro_batch()}] = t;
        }
        ++next[r.id()];
        progress = true;
      }
    }
  }
}

} // namespace

StringRef frenzy::scheduleName(PipelineSchedule kind) {
  return kind == PipelineSchedule::GPipe ? "gpipe" : "1f1b";
}

std::optional<PipelineSchedule> frenzy::parseScheduleName(StringRef name) {
  if (name == "1f1b")
    return PipelineSchedule::OneFOneB;
  if (name == "gpipe")
    return PipelineSchedule::GPipe;
  return std::nullopt;
}

std::vector<PhaseStep> frenzy::stageOrder(PipelineSchedule kind, int64_t s,
                                          int64_t S, int64_t M) {
  std::vector<PhaseStep> o;
  int64_t warm = kind == PipelineSchedule::GPipe ? M : std::min(S - s - 1, M);
  for (int64_t i = 0; i < warm; ++i)
    o.push_back({false, int32_t(i)});
  for (int64_t i = 0; i + warm < M; ++i) {
    o.push_back({false, int32_t(warm + i)});
    o.push_back({true, int32_t(i)});
  }
  for (int64_t i = std::max<int64_t>(0, M - warm); i < M; ++i)
    o.push_back({true, int32_t(i)});
  return o;
}

ScheduleOrders frenzy::scheduleOrders(const PartitionPlan &pp,
                                      PipelineSchedule kind) {
  ScheduleOrders out;
  out.kind = kind;
  for (const Pipeline &p : pp.pipelines) {
    auto &stages = out.pipelines.emplace_back();
    int64_t S = int64_t(p.stages.size());
    for (int64_t s = 0; s < S; ++s)
      stages.push_back(stageOrder(kind, s, S, p.microBatches));
  }
  return out;
}

void frenzy::addPipelineSchedule(plan::Plan &plan,
                                 const ScheduleOrders &schedule) {
  std::map<int32_t, StageList> pipelines;
  for (const plan::StageProgram &sp : plan.stages())
    pipelines[sp.pipeline()].push_back(&sp);
  std::set<int32_t> inTied;
  for (const plan::CommGroup &g : plan.groups())
    if (g.kind() == plan::CommGroup::TIED)
      inTied.insert(g.ranks().begin(), g.ranks().end());

  for (auto &[p, stages] : pipelines) {
    std::sort(stages.begin(), stages.end(), [](auto *a, auto *b) {
      return a->stage() < b->stage();
    });
    // A pipeline's stages share one program (one TP degree per pipeline).
    std::vector<Transfer> xfers =
        transfers(*plan::programAt(plan, stages.front()->program()), stages);
    for (size_t s = 0; s < stages.size(); ++s) {
      const plan::StageProgram &sp = *stages[s];
      for (int j = 0; j < sp.ranks_size(); ++j) {
        plan::Rank &rank = *plan.mutable_ranks(sp.ranks(j));
        rank.set_schedule(scheduleName(schedule.kind).str());
        auto *stream = rank.mutable_stream();
        for (PhaseStep step : schedule.pipelines[size_t(p)][s]) {
          Phase ph = step.backward ? kBackward : kForward;
          int32_t mb = step.microBatch;
          for (const Transfer &x : xfers)
            if (x.to == s && x.recvPhase == ph) {
              const auto &from = stages[x.from]->ranks();
              *stream->Add() = action(plan::Action::RECV, mb, x.tensor,
                                      from[j % from.size()]);
            }
          *stream->Add() = action(ph == kForward ? plan::Action::FORWARD
                                                 : plan::Action::BACKWARD,
                                  mb);
          for (const Transfer &x : xfers)
            if (x.from == s && x.sendPhase == ph) {
              const auto &to = stages[x.to]->ranks();
              for (int k = 0; k < to.size(); ++k)
                if (k % sp.ranks_size() == j)
                  *stream->Add() =
                      action(plan::Action::SEND, mb, x.tensor, to[k]);
            }
        }
        *stream->Add() = action(plan::Action::REDUCE_GRADS);
        *stream->Add() = action(plan::Action::UPDATE);
        if (inTied.count(rank.id()))
          *stream->Add() = action(plan::Action::SYNC_PARAMS);
      }
    }
  }
  predictTimeline(plan);
}
