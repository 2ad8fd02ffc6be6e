//===- RankRunner.cpp - one rank of a multi-rank plan ---------------------===//
//
// Gradients: each micro-batch's backward overwrites the gradient tensors
// (the program is the one-batch step at the micro-batch size), so they are
// summed into accumulators; the DP groups sum them over pipelines; dividing
// by the plan's total micro-batch count gives the mean over the global
// batch, as the one-rank loss's mean does. The global gradient norm is a
// sum of squares over the ranks that own each gradient (the plan names
// them), reduced once together with the loss.
//
//===----------------------------------------------------------------------===//
#include "RankRunner.h"

#include "SpeedEmulation.h"

#include "plan/PlanPrograms.h"
#include "plan/TraceFormat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace frenzy::rt {

static bool isOptimizerUpdate(const plan::Instr &in) {
  return in.op() == "adamw_update" || in.op() == "sgd_update";
}

void RankRunner::checkSupported(const plan::Plan &p) {
  for (const plan::StageProgram &sp : p.stages()) {
    const plan::Program *prog = plan::programAt(p, sp.program());
    if (!prog)
      throw RuntimeError("plan: pipeline " + std::to_string(sp.pipeline()) +
                         " stage " + std::to_string(sp.stage()) +
                         " names program " + std::to_string(sp.program()) +
                         ", which the plan does not have; re-run frenzy-opt");
    int64_t tp = plan::tpDegree(*prog);
    if (sp.ranks_size() != tp)
      throw RuntimeError(
          "pipeline " + std::to_string(sp.pipeline()) + " stage " +
          std::to_string(sp.stage()) + " runs tensor-parallel over " +
          std::to_string(sp.ranks_size()) + " ranks but its program is "
          "split for " + std::to_string(tp) +
          " (the pipeline's stages have different TP degrees, or frenzy-opt "
          "could not split this model and said why); pin a layout with one "
          "TP degree per pipeline that the model splits for, e.g. "
          "frenzy-opt --layout=1,1 or --layout=1x2,1x2");
  }
  if (p.stages_size() == 0)
    throw RuntimeError("the plan has several ranks but no stages; re-run "
                       "frenzy-opt");
}

/// Where this rank is in the plan, checked against the world.
static const plan::Rank &rankOf(const plan::Plan &plan, Comm &comm) {
  RankRunner::checkSupported(plan);
  if (plan.ranks_size() != comm.size())
    throw RuntimeError("the plan has " + std::to_string(plan.ranks_size()) +
                       " ranks but " + std::to_string(comm.size()) +
                       " processes were started; start one per rank (or run "
                       "frenzy-launch PLAN alone and it starts them)");
  const plan::Rank &me = plan.ranks(comm.rank());
  if (me.id() != comm.rank())
    throw RuntimeError("plan: rank " + std::to_string(comm.rank()) +
                       " has id " + std::to_string(me.id()));
  return me;
}

/// The stage of `me`.
static const plan::StageProgram *stageOf(const plan::Plan &plan,
                                         const plan::Rank &me) {
  const plan::StageProgram *st = nullptr;
  for (const plan::StageProgram &sp : plan.stages())
    for (int32_t r : sp.ranks())
      if (r == me.id())
        st = &sp;
  if (!st)
    throw RuntimeError("plan: rank " + std::to_string(me.id()) +
                       " belongs to no stage");
  return st;
}

RankRunner::RankRunner(const plan::Plan &p, Comm &host, const MakeBackend &make)
    : plan(p), hostComm(host), me(rankOf(p, host)), st(stageOf(p, me)) {
  if (plan.total_micro_batches() <= 0 || plan.micro_batch() <= 0)
    throw RuntimeError("plan: no micro-batches (re-run frenzy-opt)");
  forward.assign(st->forward_instrs().begin(), st->forward_instrs().end());
  backward.assign(st->backward_instrs().begin(), st->backward_instrs().end());
  updates.assign(st->update_instrs().begin(), st->update_instrs().end());
  const plan::Program &prog = *plan::programAt(plan, st->program());

  // Tensors sent after the phase that makes them and not read by a later
  // phase here are freed once sent, not after their last local reader.
  std::set<int32_t> madeForward, readBackward;
  for (int32_t i : forward)
    madeForward.insert(prog.instrs(i).outputs().begin(),
                       prog.instrs(i).outputs().end());
  for (int32_t i : backward)
    readBackward.insert(prog.instrs(i).inputs().begin(),
                        prog.instrs(i).inputs().end());
  for (const plan::Action &a : me.stream()) {
    bool xfer = a.kind() == plan::Action::SEND || a.kind() == plan::Action::RECV;
    if (xfer && (a.tensor() < 0 || a.tensor() >= prog.tensors_size() ||
                 a.peer() < 0 || a.peer() >= plan.ranks_size() ||
                 a.peer() == me.id()))
      throw RuntimeError("plan: rank " + std::to_string(me.id()) +
                         " has a transfer of tensor " +
                         std::to_string(a.tensor()) + " with rank " +
                         std::to_string(a.peer()));
    if (a.kind() == plan::Action::SEND &&
        !(madeForward.count(a.tensor()) && readBackward.count(a.tensor())))
      freeLate.insert(a.tensor());
  }
  recomputeForward = st->recompute_forward();
  if (recomputeForward) {
    std::set<int32_t> sent;
    for (const plan::Action &a : me.stream())
      if (a.kind() == plan::Action::SEND)
        sent.insert(a.tensor());
    for (int32_t id : madeForward) {
      if (sent.count(id)) {
        if (freeLate.count(id))
          rerunSent.push_back(id); // the rerun's copy is never sent
      } else if (readBackward.count(id)) {
        dropAfterForward.push_back(id);
      }
    }
    // A received input read only by the forward would be freed after its
    // last reader; the rerun needs it, so it is released after the backward.
    for (const plan::Action &a : me.stream())
      if (a.kind() == plan::Action::RECV && !madeForward.count(a.tensor()) &&
          !readBackward.count(a.tensor()) && freeLate.insert(a.tensor()).second)
        keptInputs.push_back(a.tensor());
  }
  std::vector<int32_t> order = forward;
  order.insert(order.end(), backward.begin(), backward.end());
  order.insert(order.end(), updates.begin(), updates.end());
  // The backend is made once the runner knows what it runs; the data comm
  // after the backend (a device transport needs its device).
  be = make(order, freeLate, st->program());
  comm = &be->dataComm(hostComm);
  Executor &ex = be->host();

  for (int32_t i : updates)
    if (isOptimizerUpdate(prog.instrs(i)))
      grads.push_back(prog.instrs(i).inputs(1));
  if (plan.optimizer().kind().empty())
    for (const plan::Io &io : prog.outputs())
      if (io.name().rfind("grad.", 0) == 0 &&
          !ex.tensor(io.tensor()).storage.empty())
        grads.push_back(io.tensor());
  {
    std::map<int32_t, size_t> lastUse; // gradient -> position in backward
    std::set<int32_t> isGrad(grads.begin(), grads.end());
    for (size_t k = 0; k < backward.size(); ++k)
      for (auto *ids : {&prog.instrs(backward[k]).inputs(),
                        &prog.instrs(backward[k]).outputs()})
        for (int32_t id : *ids)
          if (isGrad.count(id))
            lastUse[id] = k;
    std::map<size_t, std::vector<int32_t>> doneAt;
    for (auto [g, k] : lastUse)
      doneAt[k].push_back(g);
    size_t begin = 0;
    for (auto &[k, gs] : doneAt) {
      backwardParts.emplace_back(
          std::vector<int32_t>(backward.begin() + begin,
                               backward.begin() + k + 1),
          gs);
      begin = k + 1;
    }
    // Gradients made outside the backward (none today) are added after it.
    std::vector<int32_t> rest;
    for (int32_t g : grads)
      if (!lastUse.count(g))
        rest.push_back(g);
    backwardParts.emplace_back(
        std::vector<int32_t>(backward.begin() + begin, backward.end()), rest);
  }

  // Communicators: every member creates each of its groups in plan order.
  for (int g = 0; g < plan.groups_size(); ++g) {
    const plan::CommGroup &grp = plan.groups(g);
    std::vector<int32_t> ranks(grp.ranks().begin(), grp.ranks().end());
    if (std::find(ranks.begin(), ranks.end(), me.id()) == ranks.end())
      continue;
    if (grp.kind() == plan::CommGroup::DP) {
      checkPieces(grp);
      dpGroups.emplace_back(&grp, comm->group(ranks, g));
    }
    else if (grp.kind() == plan::CommGroup::TIED)
      // A device transport has point-to-point communicators for the
      // pipeline's pairs only; it syncs tied parameters by the group's
      // broadcast instead (syncParams).
      tiedGroups.emplace_back(&grp, comm->memory() == MemorySpace::Device
                                        ? comm->group(ranks, g)
                                        : Group::world());
    else if (grp.kind() == plan::CommGroup::TP) {
      Group tp = comm->group(ranks, g);
      be->setTpAllReduce([this, tp](float *data, int64_t n) {
        comm->allReduceSum(data, n, tp);
      });
      // Sequence parallelism's chunks are in TP-rank order: the group's
      // ranks are listed in it (StagePrograms), as Comm orders members.
      be->setTpChunks(
          [this, tp](const float *mine, float *all, int64_t n) {
            comm->allGather(mine, all, n, tp);
          },
          [this, tp](const float *all, float *mine, int64_t n) {
            comm->reduceScatterSum(all, mine, n, tp);
          });
    }
  }
  ex.context().tpRank = me.tp_rank();
  if (comm->size() > 1)
    be->setBetweenKernels([this] { comm->progress(); });
  planSlots = plan.side_tasks_size() > 0;
}

/// A slot of the plan: its task until the main stream can go on (the
/// next receive's message is there) or the slot's time on this machine is
/// over. Without a receive after it (a slot before the reduction), the
/// time alone bounds it.
void RankRunner::runPlanSlot(int pos) {
  const plan::SideTaskSlot &ps = me.stream(pos).side_task();
  int task = ps.task() >= 0 && size_t(ps.task()) < hostTask.size()
                 ? hostTask[size_t(ps.task())]
                 : -1;
  double scale = slotScale > 0 ? slotScale
                 : plan.predicted_step_seconds() > 0
                     ? lastStep / plan.predicted_step_seconds()
                     : 0;
  if (task < 0 || scale <= 0)
    return;
  const plan::Action *recv = nullptr;
  for (int k = pos + 1; k < me.stream_size() && !recv; ++k) {
    const plan::Action &a = me.stream(k);
    if (a.kind() == plan::Action::RECV)
      recv = &a;
    else if (a.kind() != plan::Action::SIDE_TASK)
      break;
  }
  SideSlot slot;
  slot.task = task;
  slot.duration = ps.duration();
  slot.memoryBytes = ps.memory_bytes();
  std::function<bool()> ready;
  if (recv)
    ready = [this, recv] { return comm->arrived(recv->peer(), recv->tensor()); };
  side->runSlot(slot, ready, ps.duration() * scale);
}

/// Checks this rank's pieces of a DP group against its gradients, once:
/// reduceGradients then trusts them every step.
void RankRunner::checkPieces(const plan::CommGroup &g) const {
  for (const plan::Member &m : g.members()) {
    if (m.rank() != me.id())
      continue;
    for (const plan::Piece &pc : m.pieces()) {
      if (std::find(grads.begin(), grads.end(), pc.tensor()) == grads.end())
        throw RuntimeError("plan: DP group piece names tensor " +
                           std::to_string(pc.tensor()) +
                           ", which is not a gradient of rank " +
                           std::to_string(me.id()));
      const Tensor &t = be->host().tensor(pc.tensor());
      if (pc.count() < 1 || (pc.count() > 1 &&
                             (pc.dim() < 0 || pc.dim() >= int(t.shape.size()) ||
                              pc.blocks() < 1 || pc.index() < 0 ||
                              pc.index() >= pc.count())))
        throw RuntimeError("plan: malformed DP group piece of tensor " +
                           std::to_string(pc.tensor()) + "; re-run frenzy-opt");
    }
  }
}

void RankRunner::setTrace(Trace *t) {
  trace = t;
  be->setClassTimes(t ? t->classSeconds() : nullptr);
}

void RankRunner::setData(const TokenData *tokens) {
  data = tokens;
  inputs = TokenInputs::bind(be->host());
}

void RankRunner::beginMicroBatch(int64_t mb) {
  for (int32_t id : toRelease)
    be->release(id);
  toRelease.clear();
  be->switchMicroBatch(mb);
  StepContext &ctx = be->host().context();
  ctx.microBatch = plan.micro_batch();
  ctx.sampleOffset = (st->first_micro_batch() + mb) * plan.micro_batch();
}

void RankRunner::forwardOrBackward(const plan::Action &a) {
  beginMicroBatch(a.micro_batch());
  StepContext &ctx = be->host().context();
  if (data) {
    inputs->fill(*data, ctx.step, plan.global_batch(), ctx.sampleOffset);
    be->uploadInputs();
  }
  if (a.kind() == plan::Action::FORWARD) {
    be->run(forward);
    int32_t loss = be->host().lossTensorId();
    if (st->head() && me.tp_rank() == 0 && loss >= 0 &&
        !be->host().tensor(loss).storage.empty())
      lossSum += be->loss(ctx.step);
    for (int32_t id : dropAfterForward)
      be->release(id);
    return;
  }
  if (recomputeForward) {
    // The same micro-batch, step and inputs: the kernels (dropout draws
    // from a counter seeded by step and sample) give the same values.
    be->run(forward);
    for (int32_t id : rerunSent)
      be->release(id);
  }
  for (const auto &[instrs, done] : backwardParts) {
    be->run(instrs);
    for (int32_t g : done)
      accumulate(g);
  }
  for (int32_t id : keptInputs)
    be->release(id);
  ++microBatchesRun;
}

void RankRunner::accumulate(int32_t g) {
  // The first micro-batch's gradients become the accumulators; a later
  // one's are added and freed, so a stage keeps one set of gradients
  // however many micro-batches it runs (before, each micro-batch's set
  // stayed allocated until the update, and was put away with its
  // activations: m sets, which the memory model does not predict).
  if (!be->has(g)) // not made on this rank
    return;
  if (microBatchesRun == 0) {
    be->keepGradient(g);
    accumulated.insert(g);
    return;
  }
  be->addGradient(g);
}

StepResult RankRunner::runStep(int64_t step, uint64_t seed) {
  be->beginStep(step, seed);
  accumulated.clear();
  lossSum = 0;
  microBatchesRun = 0;
  StepResult result;
  bool timed = measure || side || speedFactor > 1 || actionClock.scale > 0;
  times = StepTimes();
  double stepStart = timed ? steadySeconds() : 0;
  gapLimit.resize(size_t(me.stream_size()), 0.0);
  for (int pos = 0; pos < me.stream_size(); ++pos) {
    const plan::Action &a = me.stream(pos);
    double t0 = trace ? trace->now() : 0;
    double w0 = timed ? steadySeconds() : 0;
    switch (a.kind()) {
    case plan::Action::FORWARD:
    case plan::Action::BACKWARD: {
      double cpu0 = trace ? Trace::cpuNow() : 0;
      double tc0 = timed ? threadCpuSeconds() : 0;
      forwardOrBackward(a);
      if (timed) {
        double cpu = threadCpuSeconds() - tc0;
        times.computeCpu += cpu;
        bool fwd = a.kind() == plan::Action::FORWARD;
        if (fwd)
          times.forwardCpu += cpu;
        double fixed = fwd ? forwardSeconds : backwardSeconds;
        times.emulated +=
            actionClock.on(a) ? actionClock.run(a, w0)
            : fixed > 0       ? emulateFor(w0, fixed, actionClock.debt)
                        : emulateUntil(w0, cpu, speedFactor, actionClock.debt);
        times.compute += steadySeconds() - w0;
      }
      if (trace) {
        auto args = trace->takeClassArgs();
        args.emplace_back("cpu_us", Trace::cpuNow() - cpu0);
        trace->slice(plan::kComputeThread, plan::sliceName(a), "compute", t0,
                     std::move(args));
      }
      break;
    }
    case plan::Action::SEND: {
      int64_t bytes = be->bytes(a.tensor());
      // An emulated transfer: the message leaves at the predicted end.
      if (timed)
        times.emulated += actionClock.run(a, w0);
      comm->send(be->data(a.tensor()), bytes, a.peer(), a.tensor());
      actionClock.settle(a);
      if (freeLate.count(a.tensor()))
        toRelease.push_back(a.tensor());
      if (trace)
        trace->slice(plan::kCommThread, plan::sliceName(a), "comm", t0,
                     {{"bytes", double(bytes)}});
      break;
    }
    case plan::Action::RECV:
      beginMicroBatch(a.micro_batch());
      be->allocate(a.tensor());
      if (timed) {
        // The gap in front of a receive: side tasks until the message is
        // there (MPI_Iprobe between their steps), then the wait measured.
        double &limit = gapLimit[size_t(pos)];
        if (side && limit > 0 && !planSlots)
          side->runSlot({}, [&] { return comm->arrived(a.peer(), a.tensor()); },
                        limit);
        // An emulated device sleeps through most of the wait it had here
        // last step (Comm::probe: spinning ranks exhaust SCHED_FIFO's
        // budget), then spins for the message.
        if (actionClock.scale > 0)
          comm->probe(a.peer(), a.tensor(), w0 + 0.9 * limit);
        else
          comm->probe(a.peer(), a.tensor());
        limit = steadySeconds() - w0;
        times.recvWait += limit;
      }
      if (trace) {
        comm->probe(a.peer(), a.tensor());
        trace->slice(plan::kCommThread, "wait " + plan::sliceName(a), "wait",
                     t0);
        t0 = trace->now();
      }
      if (timed) // an emulated transfer, once the message is there
        times.emulated += actionClock.run(a, steadySeconds());
      comm->recv(be->data(a.tensor()), be->bytes(a.tensor()), a.peer(),
                 a.tensor());
      actionClock.settle(a);
      if (trace)
        trace->slice(plan::kCommThread, plan::sliceName(a), "comm", t0,
                     {{"bytes", double(be->bytes(a.tensor()))}});
      break;
    case plan::Action::REDUCE_GRADS:
      beginMicroBatch(0);
      reduceGradients();
      if (timed) {
        // An emulated device: the reduction and its copies take the plan's
        // time once the collective is done (a compute slice, as predicted).
        // (Its slice covers the copies too where no DP wait is inside.)
        double e0 =
            trace ? (dpGroups.empty() ? reduceTraced : trace->now()) : 0;
        double slept = actionClock.run(a, reduceStart, reduceWaited);
        times.emulated += slept;
        if (trace && slept > 0)
          trace->slice(plan::kComputeThread, "dp copies", "compute", e0);
        times.collective += steadySeconds() - w0;
      }
      break;
    case plan::Action::UPDATE:
      result = update(a);
      if (timed)
        times.collective += steadySeconds() - w0;
      break;
    case plan::Action::SYNC_PARAMS:
      syncParams(a); // traces its wait and its transfers
      break;
    case plan::Action::SIDE_TASK:
      // A slot the compiler placed (issue 14): side tasks run only here
      // when the plan has slots; without a host the bubble stays idle.
      if (side)
        runPlanSlot(pos);
      break;
    default:
      throw RuntimeError("plan: unknown action " + std::to_string(a.kind()));
    }
  }
  // A device backend drains its queue here and copies the outputs back
  // (which carry the last micro-batch's loss: the step's mean goes over it).
  be->endStep(step);
  int32_t loss = be->host().lossTensorId();
  if (loss >= 0 && !be->host().tensor(loss).storage.empty() &&
      !result.peakBytes.empty())
    be->host().tensor(loss).f32()[0] = float(result.loss);
  if (timed)
    times.step = lastStep = steadySeconds() - stepStart;
  return result;
}

} // namespace frenzy::rt
