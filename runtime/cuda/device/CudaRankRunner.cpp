//===- CudaRankRunner.cpp - one rank of a multi-rank plan on a GPU --------===//
#include "CudaRankRunner.h"

#include "CudaCheck.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <cmath>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

bool isOptimizerUpdate(const plan::Instr &in) {
  return in.op() == "adamw_update" || in.op() == "sgd_update";
}

} // namespace

CudaRankRunner::CudaRankRunner(const plan::Plan &p, int rank, bool shareGpus)
    : plan(p) {
  if (rank < 0 || rank >= plan.ranks_size())
    throw RuntimeError("rank " + std::to_string(rank) +
                       ": the plan has no such rank");
  me = plan.ranks(rank);
  for (const plan::StageProgram &sp : plan.stages())
    for (int32_t r : sp.ranks())
      if (r == me.id())
        st = &sp;
  if (!st)
    throw RuntimeError("plan: rank " + std::to_string(rank) +
                       " belongs to no stage");
  if (st->recompute_forward())
    throw RuntimeError("--backend=cuda: full recomputation is not supported "
                       "by the CUDA backend yet; pass --backend=cpu");
  if (plan.total_micro_batches() <= 0 || plan.micro_batch() <= 0)
    throw RuntimeError("plan: no micro-batches (re-run frenzy-opt)");
  forward.assign(st->forward_instrs().begin(), st->forward_instrs().end());
  backward.assign(st->backward_instrs().begin(), st->backward_instrs().end());
  updates.assign(st->update_instrs().begin(), st->update_instrs().end());
  const plan::Program *prog = plan::programAt(plan, st->program());
  if (!prog)
    throw RuntimeError("plan: stage names a program the plan does not have");
  // Sent tensors not read by a later phase here are freed once sent.
  std::set<int32_t> madeForward, readBackward;
  for (int32_t i : forward)
    madeForward.insert(prog->instrs(i).outputs().begin(),
                       prog->instrs(i).outputs().end());
  for (int32_t i : backward)
    readBackward.insert(prog->instrs(i).inputs().begin(),
                        prog->instrs(i).inputs().end());
  for (const plan::Action &a : me.stream())
    if (a.kind() == plan::Action::SEND &&
        !(madeForward.count(a.tensor()) && readBackward.count(a.tensor())))
      freeLate.insert(a.tensor());
  for (const plan::CommGroup &g : plan.groups())
    if (g.kind() == plan::CommGroup::DP)
      for (const plan::Member &m : g.members())
        for (const plan::Piece &pc : m.pieces())
          if (pc.count() > 1)
            throw RuntimeError("--backend=cuda: DP groups that split a "
                               "gradient (pipelines of different TP "
                               "degrees) are not supported by the CUDA "
                               "backend yet; pass --backend=cpu");
  order = forward;
  order.insert(order.end(), backward.begin(), backward.end());
  order.insert(order.end(), updates.begin(), updates.end());
  hostEx = std::make_unique<Executor>(plan, order, freeLate, st->program());
  hostEx->context().tpRank = me.tp_rank();
  ctx = std::make_unique<DeviceContext>(plan, rank, shareGpus);
  comms = std::make_unique<NcclComms>(plan, *ctx, cudaTimeoutSeconds());
}

CudaRankRunner::~CudaRankRunner() = default;

void CudaRankRunner::loadWeights(std::optional<uint64_t> initSeed) {
  hostEx->loadWeights(initSeed);
  ex = std::make_unique<CudaExecutor>(plan, *hostEx, *ctx, order, freeLate);
  for (int g = 0; g < plan.groups_size(); ++g)
    if (plan.groups(g).kind() == plan::CommGroup::TP)
      if (const CommSpec *c = comms->forGroup(g))
        ex->tpAllReduce = [this, c](float *p, int64_t n) {
          comms->allReduceSum(*c, p, n, ctx->compute());
        };
  const plan::Program &prog = hostEx->program();
  for (int32_t i : updates)
    if (isOptimizerUpdate(prog.instrs(i)))
      accum.push_back({prog.instrs(i).inputs(1), nullptr});
  for (auto &[g, a] : accum)
    a = reinterpret_cast<float *>(ctx->allocator().allocate(
        hostEx->tensor(g).numel() * 4, 0,
        "the gradient accumulator of tensor " + std::to_string(g)));
  scratch = reinterpret_cast<float *>(
      ctx->allocator().allocate(8, 0, "the norm and clip factor"));
}

void CudaRankRunner::setData(const TokenData *tokens) {
  data = tokens;
  inputs = TokenInputs::bind(*hostEx);
}

void CudaRankRunner::beginMicroBatch(int64_t mb) {
  for (int32_t id : toRelease)
    ex->release(id);
  toRelease.clear();
  ex->switchMicroBatch(mb);
  StepContext &sc = hostEx->context();
  sc.microBatch = plan.micro_batch();
  sc.sampleOffset = (st->first_micro_batch() + mb) * plan.micro_batch();
}

void CudaRankRunner::forwardOrBackward(const plan::Action &a) {
  beginMicroBatch(a.micro_batch());
  StepContext &sc = hostEx->context();
  if (data) {
    inputs->fill(*data, sc.step, plan.global_batch(), sc.sampleOffset);
    ex->uploadInputs();
  }
  if (a.kind() == plan::Action::FORWARD) {
    ex->run(forward);
    int32_t loss = hostEx->lossTensorId();
    bool holdsLoss = loss >= 0 && !hostEx->tensor(loss).storage.empty();
    if (st->head() && me.tp_rank() == 0 && holdsLoss)
      lossSum += ex->checkedLoss(sc.step);
    return;
  }
  ex->run(backward);
  cudaStream_t s = ctx->compute();
  for (auto [g, acc] : accum) {
    int64_t n = hostEx->tensor(g).numel();
    if (microBatchesRun == 0) {
      FRENZY_CUDA_CHECK(cudaMemcpyAsync(acc, ex->deviceTensor(g),
                                        size_t(n) * 4,
                                        cudaMemcpyDeviceToDevice, s),
                        ctx->who());
      continue;
    }
    k::Status st = k::binary(s, cpu::BinaryKind::Add, k::FloatType::F32, acc,
                             {n}, acc, {n}, ex->deviceTensor(g), {n});
    if (!st.ok())
      throw RuntimeError(ctx->who() + ": gradient accumulation: " +
                         st.message());
  }
  ++microBatchesRun;
}

void CudaRankRunner::reduceGradients() {
  cudaStream_t s = ctx->compute();
  for (int gi = 0; gi < plan.groups_size(); ++gi) {
    const plan::CommGroup &g = plan.groups(gi);
    const CommSpec *c = comms->forGroup(gi);
    if (g.kind() != plan::CommGroup::DP || !c)
      continue;
    for (const plan::Member &m : g.members())
      if (m.rank() == me.id())
        for (const plan::Piece &pc : m.pieces())
          for (auto [t, acc] : accum)
            if (t == pc.tensor())
              comms->allReduceSum(*c, acc, hostEx->tensor(t).numel(), s);
  }
  float inv = 1.0f / float(plan.total_micro_batches());
  FRENZY_CUDA_CHECK(
      cudaMemcpyAsync(scratch + 1, &inv, 4, cudaMemcpyHostToDevice, s),
      ctx->who());
  ctx->synchronize(s, cudaTimeoutSeconds(), "the gradient sums");
  for (auto [g, acc] : accum) {
    int64_t n = hostEx->tensor(g).numel();
    k::Status st = k::scaleBy(s, acc, n, scratch + 1);
    if (!st.ok())
      throw RuntimeError(ctx->who() + ": gradient mean: " + st.message());
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(ex->deviceTensor(g), acc, size_t(n) * 4,
                                      cudaMemcpyDeviceToDevice, s),
                      ctx->who());
  }
}

CudaStepResult CudaRankRunner::update() {
  cudaStream_t s = ctx->compute();
  // This rank's share of the squared global norm (the clip kernel with no
  // clipping gives the L2 norm of a list of tensors).
  std::vector<const float *> ptrs;
  std::vector<int64_t> sizes;
  for (int32_t g : me.norm_tensors()) {
    ptrs.push_back(deviceFloats(g));
    sizes.push_back(hostEx->tensor(g).numel());
  }
  double sums[2] = {0, lossSum};
  if (!ptrs.empty()) {
    void *ws = reinterpret_cast<void *>(ctx->allocator().allocate(
        int64_t(std::max<size_t>(
            k::gradNormWorkspaceBytes(sizes.data(), int(sizes.size())), 1)),
        0, "the gradient norm's workspace"));
    k::Status st = k::clipGradNorm(s, ptrs.data(), sizes.data(),
                                   int(ptrs.size()), 0.0, scratch, scratch + 1,
                                   ws);
    if (!st.ok())
      throw RuntimeError(ctx->who() + ": gradient norm: " + st.message());
    float norm = 0;
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(&norm, scratch, 4,
                                      cudaMemcpyDeviceToHost, s),
                      ctx->who());
    ctx->synchronize(s, cudaTimeoutSeconds(), "the gradient norm");
    ctx->allocator().free(reinterpret_cast<uint64_t>(ws));
    sums[0] = double(norm) * double(norm);
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CudaStepResult r;
  r.loss = sums[1] / double(plan.total_micro_batches());
  r.gradNorm = std::sqrt(sums[0]);
  StepContext &sc = hostEx->context();
  if (!std::isfinite(r.loss))
    throw RuntimeError("step " + std::to_string(sc.step) + ": the loss is " +
                       std::to_string(r.loss) +
                       "; stopped before the update, parameters keep their "
                       "values from step " + std::to_string(sc.step - 1));
  const plan::Program &prog = hostEx->program();
  for (int32_t i : updates) {
    const plan::Instr &in = prog.instrs(i);
    if (in.op() == "clip_grad_norm") {
      double maxNorm =
          in.attrs().count("max_norm") ? in.attrs().at("max_norm").f() : 0.0;
      float vals[2] = {float(r.gradNorm),
                       float(clipScale(r.gradNorm, maxNorm))};
      FRENZY_CUDA_CHECK(cudaMemcpyAsync(deviceFloats(in.outputs(0)), vals, 4,
                                        cudaMemcpyHostToDevice, s),
                        ctx->who());
      FRENZY_CUDA_CHECK(cudaMemcpyAsync(deviceFloats(in.outputs(1)), vals + 1,
                                        4, cudaMemcpyHostToDevice, s),
                        ctx->who());
      ctx->synchronize(s, cudaTimeoutSeconds(), "the clip factor");
      continue;
    }
    ex->run({i});
  }
  return r;
}

void CudaRankRunner::syncParams() {
  for (int gi = 0; gi < plan.groups_size(); ++gi) {
    const plan::CommGroup &g = plan.groups(gi);
    const CommSpec *c = comms->forGroup(gi);
    if (g.kind() != plan::CommGroup::TIED || !c)
      continue;
    for (int32_t t : g.tensors())
      comms->broadcast(*c, ex->deviceTensor(t), ex->deviceBytes(t), 0,
                       ctx->compute());
  }
}

CudaStepResult CudaRankRunner::runStep(int64_t step, uint64_t seed) {
  ex->beginStep(step, seed);
  lossSum = 0;
  microBatchesRun = 0;
  CudaStepResult result;
  cudaStream_t s = ctx->compute();
  for (const plan::Action &a : me.stream()) {
    switch (a.kind()) {
    case plan::Action::FORWARD:
    case plan::Action::BACKWARD:
      forwardOrBackward(a);
      break;
    case plan::Action::SEND:
      comms->send(a.peer(), ex->deviceTensor(a.tensor()),
                  ex->deviceBytes(a.tensor()), a.tensor(), s);
      if (freeLate.count(a.tensor()))
        toRelease.push_back(a.tensor());
      break;
    case plan::Action::RECV:
      beginMicroBatch(a.micro_batch());
      comms->recv(a.peer(), ex->deviceTensor(a.tensor()),
                  ex->deviceBytes(a.tensor()), a.tensor(), s);
      break;
    case plan::Action::REDUCE_GRADS:
      beginMicroBatch(0);
      reduceGradients();
      break;
    case plan::Action::UPDATE:
      result = update();
      break;
    case plan::Action::SYNC_PARAMS:
      syncParams();
      break;
    default:
      throw RuntimeError("plan: unknown action " + std::to_string(a.kind()));
    }
  }
  ex->finishStep(step);
  comms->waitSends();
  int32_t loss = hostEx->lossTensorId();
  if (loss >= 0 && !hostEx->tensor(loss).storage.empty())
    hostEx->tensor(loss).f32()[0] = float(result.loss);
  return result;
}
