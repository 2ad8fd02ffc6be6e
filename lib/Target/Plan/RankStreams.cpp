//===- RankStreams.cpp - every rank's actions of one step -----------------===//
//
// Per pipeline, each stage runs its micro-batches in the order
// frenzy.schedule records (GPipe, 1F1B). Around each forward or backward
// go the receives of the tensors that phase reads from other stages and
// the sends of what other stages read from it (the pipeline's transfers,
// StagePlacement.cpp); a tensor crossing stages in either direction (the
// tied embedding's gradient travels from the head back to the embedding)
// is handled the same way. After the last backward: gradient reduction,
// update, tied-parameter sync. A small simulation gives each action a
// predicted start from the stages' predicted times (forward one third of
// a micro-batch's time, backward two thirds).
//
//===----------------------------------------------------------------------===//
#include "PlanParts.h"

#include <map>
#include <set>
#include <tuple>

using namespace frenzy;
using namespace frenzy::target;

static plan::Action action(plan::Action::Kind k, int32_t mb = 0,
                           int32_t tensor = 0, int32_t peer = 0) {
  plan::Action a;
  a.set_kind(k);
  a.set_micro_batch(mb);
  a.set_tensor(tensor);
  a.set_peer(peer);
  return a;
}

/// Predicted start of every action: ranks advance through their streams;
/// a receive waits for the sender's phase to finish.
static void predictStarts(PlacedPlan &pl) {
  using Key = std::tuple<int32_t, int32_t, int32_t>; // rank, phase, mb
  std::map<Key, double> done;
  size_t n = pl.streams.size();
  std::vector<size_t> next(n, 0);
  std::vector<double> now(n, 0);
  // Which phase of the sender produces a received tensor: the last phase
  // before the matching SEND in the sender's stream.
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>,
           std::pair<int32_t, int32_t>>
      sentAfter; // (from, to, tensor, mb) -> (phase kind, mb)
  for (size_t r = 0; r < n; ++r) {
    std::pair<int32_t, int32_t> last{0, 0};
    for (const plan::Action &a : pl.streams[r]) {
      if (a.kind() == plan::Action::FORWARD ||
          a.kind() == plan::Action::BACKWARD)
        last = {int32_t(a.kind()), a.micro_batch()};
      if (a.kind() == plan::Action::SEND)
        sentAfter[{int32_t(r), a.peer(), a.tensor(), a.micro_batch()}] = last;
    }
  }
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t r = 0; r < n; ++r) {
      double sec = pl.stageOf[r]->stage->seconds;
      std::vector<plan::Action> &stream = pl.streams[r];
      while (next[r] < stream.size()) {
        plan::Action &a = stream[next[r]];
        double &t = now[r];
        if (a.kind() == plan::Action::RECV) {
          auto key = sentAfter[{a.peer(), int32_t(r), a.tensor(),
                                a.micro_batch()}];
          auto it = done.find({a.peer(), key.first, key.second});
          if (it == done.end())
            break;
          t = std::max(t, it->second);
        }
        a.set_predicted_start(t);
        if (a.kind() == plan::Action::FORWARD) {
          t += sec / 3;
          done[{int32_t(r), int32_t(a.kind()), a.micro_batch()}] = t;
        } else if (a.kind() == plan::Action::BACKWARD) {
          t += 2 * sec / 3;
          done[{int32_t(r), int32_t(a.kind()), a.micro_batch()}] = t;
        }
        ++next[r];
        progress = true;
      }
    }
  }
}

void target::rankStreams(const ScheduleOrders &schedule, PlacedPlan &pl) {
  pl.streams.assign(size_t(pl.ranks), {});
  std::set<int32_t> inTied;
  for (const plan::CommGroup &g : pl.groups)
    if (g.kind() == plan::CommGroup::TIED)
      inTied.insert(g.ranks().begin(), g.ranks().end());
  for (size_t p = 0; p < pl.pipelines.size(); ++p) {
    const PipelineWork &pw = pl.pipelines[p];
    for (size_t s = 0; s < pw.stages.size(); ++s) {
      const StageWork &sw = pw.stages[s];
      for (size_t j = 0; j < sw.ranks.size(); ++j) {
        std::vector<plan::Action> &stream = pl.streams[size_t(sw.ranks[j])];
        for (PhaseStep step : schedule.pipelines[p][s]) {
          bool bwd = step.backward;
          int32_t mb = step.microBatch;
          for (const Transfer &x : pw.transfers)
            if (x.to == s && x.readByBackward == bwd) {
              const auto &from = pw.stages[x.from].ranks;
              stream.push_back(action(plan::Action::RECV, mb, x.tensor,
                                      from[j % from.size()]));
            }
          stream.push_back(action(
              bwd ? plan::Action::BACKWARD : plan::Action::FORWARD, mb));
          for (const Transfer &x : pw.transfers)
            if (x.from == s && x.sentAfterBackward == bwd) {
              const auto &to = pw.stages[x.to].ranks;
              for (size_t k = 0; k < to.size(); ++k)
                if (k % sw.ranks.size() == j)
                  stream.push_back(
                      action(plan::Action::SEND, mb, x.tensor, to[k]));
            }
        }
        stream.push_back(action(plan::Action::REDUCE_GRADS));
        stream.push_back(action(plan::Action::UPDATE));
        if (inTied.count(sw.ranks[j]))
          stream.push_back(action(plan::Action::SYNC_PARAMS));
      }
    }
  }
  predictStarts(pl);
}
