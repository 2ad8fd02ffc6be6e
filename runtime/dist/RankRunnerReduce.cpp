//===- RankRunnerReduce.cpp - a rank's sums over ranks --------------------===//
//
// The parts of a rank's step that sum over other ranks: its DP groups'
// gradient pieces (copied out of the accumulators, summed, copied back and
// scaled to the global batch's mean), the update's all-reduce of the
// squared norm, the loss and every rank's peak memory, and the sync of
// tied parameters from their owner. Traced, each sum is two slices: the
// wait for the other members, then the sum.
//
//===----------------------------------------------------------------------===//
#include "RankRunner.h"

#include "SpeedEmulation.h"
#include "plan/TraceFormat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace frenzy::rt {

template <class F>
RankRunner::Reduced RankRunner::tracedAllReduce(const char *what,
                                                bool waitFirst, F reduce) {
  Reduced r;
  if (!trace && !waitFirst) {
    reduce(nullptr);
    return r;
  }
  // The wait for every member, then the sum (Comm calls `arrived` between
  // the two): traced as two slices, and an emulated device counts from
  // the wait's end.
  double start = trace ? trace->now() : 0, sum = start;
  double w0 = steadySeconds();
  reduce([&](double ago) {
    r.waitFirst = true;
    r.waitEnd = std::max(w0, steadySeconds() - ago);
    r.waited = r.waitEnd - w0;
    if (trace) {
      sum = std::max(start, trace->now() - ago * 1e6);
      trace->sliceBetween(plan::kCommThread, std::string("wait ") + what,
                          "wait", start, sum);
    }
  });
  if (trace)
    trace->slice(plan::kCommThread, std::string(what) + " all-reduce", "comm",
                 sum);
  return r;
}

void RankRunner::reduceGradients() {
  {
    TraceSpan wait(trace, plan::kCommThread, "wait sends", "wait");
    comm->waitSends();
  }
  // An emulated device's reduction (runStep) counts from here, less the
  // waits for the other members.
  reduceStart = steadySeconds();
  reduceWaited = 0;
  reduceTraced = trace ? trace->now() : 0;
  // Every group's pieces are copied out before any sum is written back: a
  // rank in several lanes of one unsplit parameter (pipelines of different
  // TP degrees) must send its own gradient to each, not a sum.
  double copiesStart = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t g = 0; g < dpGroups.size(); ++g) {
      if (pass == 1 && g == 0 && trace)
        copiesStart = trace->now();
      double copyInStart = pass == 0 && trace ? trace->now() : 0;
      // This rank's pieces of the group, in the group's order.
      std::vector<const plan::Piece *> pieces;
      int64_t off = 0;
      for (const plan::Member &m : dpGroups[g].first->members())
        if (m.rank() == me.id())
          for (const plan::Piece &pc : m.pieces()) {
            pieces.push_back(&pc);
            off += be->host().tensor(pc.tensor()).numel() / pc.count();
          }
      float *buf = be->pieceBuffer(g, off);
      off = 0;
      for (const plan::Piece *pc : pieces) {
        be->copyPiece(*pc, pc->tensor(), buf + off, /*intoAccumulator=*/pass == 1);
        off += be->host().tensor(pc->tensor()).numel() / pc->count();
      }
      // The pieces copied out: work before the wait, as the predicted
      // timeline's "dp copy in".
      if (pass == 0 && trace)
        trace->slice(plan::kComputeThread, "dp copy in", "compute",
                     copyInStart);
      if (pass == 0)
        reduceWaited += tracedAllReduce(
            "dp", trace || actionClock.scale > 0,
            [&](const Comm::Arrived &arrived) {
              comm->allReduceSum(buf, off, dpGroups[g].second, arrived);
            }).waited;
    }
  // The accumulators go back into the gradient tensors the update reads
  // (in place: no second set); the update frees them.
  const float inv = 1.0f / float(plan.total_micro_batches());
  for (int32_t g : grads)
    if (accumulated.count(g))
      be->restoreGradient(g, inv);
  // The sums copied back and scaled: work, as the predicted timeline's
  // "dp copies" (untraced it read as idle time).
  if (trace && !dpGroups.empty())
    trace->slice(plan::kComputeThread, "dp copies", "compute", copiesStart);
}

StepResult RankRunner::update(const plan::Action &a) {
  // Squared norm, loss, and one slot per rank for its peak memory (each
  // rank fills its own; the sum is every rank's): the step's report rides
  // on this all-reduce instead of a gather of its own.
  // These are host doubles: the host comm sums them on every backend.
  std::vector<double> sums(2 + size_t(hostComm.size()), 0.0);
  sums[1] = lossSum;
  sums[2 + size_t(hostComm.rank())] = double(be->peakBytes());
  sums[0] = be->sumOfSquares({me.norm_tensors().begin(),
                              me.norm_tensors().end()});
  // An emulated device's all-reduce and optimizer count from the moment
  // every rank is there (also what the trace shows as the end of a wait).
  double emuStart = steadySeconds();
  Reduced red = tracedAllReduce(
      "norm", trace || actionClock.on(a), [&](const Comm::Arrived &arrived) {
        hostComm.allReduceSum(sums.data(), int64_t(sums.size()),
                              Group::world(), arrived);
      });
  if (red.waitFirst)
    emuStart = red.waitEnd;
  double optStart = trace ? trace->now() : 0;
  StepResult r;
  r.loss = sums[1] / double(plan.total_micro_batches());
  r.gradNorm = std::sqrt(sums[0]);
  for (size_t k = 2; k < sums.size(); ++k)
    r.peakBytes.push_back(int64_t(sums[k]));
  Executor &ex = be->host();
  StepContext &ctx = ex.context();
  if (!std::isfinite(r.loss))
    throw RuntimeError("step " + std::to_string(ctx.step) + ": the loss is " +
                       std::to_string(r.loss) +
                       "; stopped before the update, parameters keep their "
                       "values from step " + std::to_string(ctx.step - 1));
  int32_t loss = ex.lossTensorId();
  if (loss >= 0 && !ex.tensor(loss).storage.empty())
    ex.tensor(loss).f32()[0] = float(r.loss);
  const plan::Program &prog = ex.program();
  for (int32_t i : updates) {
    const plan::Instr &in = prog.instrs(i);
    if (in.op() == "clip_grad_norm") {
      double maxNorm = in.attrs().count("max_norm")
                           ? in.attrs().at("max_norm").f()
                           : 0.0;
      be->setScalar(in.outputs(0), float(r.gradNorm));
      be->setScalar(in.outputs(1), float(clipScale(r.gradNorm, maxNorm)));
      continue;
    }
    be->run({i});
  }
  // An emulated device: the all-reduce and the optimizer take the plan's
  // time from the moment every rank is there.
  times.emulated += actionClock.run(a, emuStart);
  if (trace)
    trace->slice(plan::kComputeThread, "optimizer", "optimizer", optStart,
                 trace->takeClassArgs());
  return r;
}

void RankRunner::syncParams(const plan::Action &a) {
  // A receiver first waits until the owner's update is sent (traced as a
  // wait, as a pipeline receive is), then receives. An emulated device
  // then takes the plan's time: the owner before posting, the receiver
  // before receiving (so the owner's wait for its sends ends after it).
  if (trace || actionClock.on(a))
    for (const auto &[g, group] : tiedGroups)
      if (g->ranks(0) != me.id() && g->tensors_size()) {
        TraceSpan wait(trace, plan::kCommThread, "wait tied params", "wait");
        comm->probe(g->ranks(0), g->tensors(0));
        break;
      }
  double t0 = trace ? trace->now() : 0;
  times.emulated += actionClock.run(a, steadySeconds());
  bool device = comm->memory() == MemorySpace::Device;
  for (const auto &[g, group] : tiedGroups) {
    int32_t owner = g->ranks(0);
    for (int32_t t : g->tensors()) {
      void *param = be->data(t);
      int64_t bytes = be->bytes(t);
      if (device) // from the group's first member (the owner)
        comm->broadcast(param, bytes, 0, group);
      else if (owner == me.id())
        for (int k = 1; k < g->ranks_size(); ++k)
          comm->send(param, bytes, g->ranks(k), t);
      else
        comm->recv(param, bytes, owner, t);
    }
  }
  actionClock.settle(a); // the owner's wait for the receiver is not an overrun
  comm->waitSends();
  if (trace)
    trace->slice(plan::kCommThread, "sync tied params", "comm", t0);
}

} // namespace frenzy::rt
