//===- CudaBackend.cpp - the Backend of a rank on one GPU -----------------===//
//
// Compiles for sm_80/sm_90; not run on a GPU in the session that wrote it
// (docs/cuda.md says what was verified where).
//
//===----------------------------------------------------------------------===//
#include "CudaBackend.h"

#include "CudaCheck.h"
#include "NcclComm.h"
#include "plan/TraceFormat.h"

#include <algorithm>
#include <cstdio>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

CudaBackend::CudaBackend(const plan::Plan &p, int rank, bool shareGpus,
                         std::vector<int32_t> order_,
                         std::set<int32_t> freeLate_, int32_t program)
    : plan(p), hostPlan(p), order(std::move(order_)),
      freeLate(std::move(freeLate_)) {
  // The host executor computes nothing here; it refuses non-fp32 plans.
  hostPlan.set_precision("fp32");
  hostEx = std::make_unique<Executor>(hostPlan, order, freeLate, program);
  ctx = std::make_unique<DeviceContext>(plan, rank, shareGpus);
  const plan::Program &prog = hostEx->program();
  for (const plan::Instr &in : prog.instrs())
    opClass.push_back(uint8_t(plan::opClassOf(in.op())));
}

CudaBackend::~CudaBackend() {
  for (auto [a, b] : events) {
    (void)cudaEventDestroy(a);
    (void)cudaEventDestroy(b);
  }
}

Comm &CudaBackend::dataComm(Comm &hostComm) {
  if (!nccl)
    nccl = std::make_unique<NcclComm>(plan, *ctx, hostComm,
                                          cudaTimeoutSeconds());
  return *nccl;
}

void CudaBackend::check(const k::Status &st, const char *what) const {
  if (!st.ok())
    throw RuntimeError(ctx->who() + ": " + what + ": " + st.message());
}

void CudaBackend::fromHost() {
  if (!ex) { // the first time: every persistent tensor goes up
    ex = std::make_unique<CudaExecutor>(plan, *hostEx, *ctx, order, freeLate);
    ex->tpAllReduce = tpAllReduce;
    ex->tpAllGather = tpAllGather;
    ex->tpReduceScatter = tpReduceScatter;
    scalars = reinterpret_cast<float *>(
        ctx->allocator().allocate(8, 0, "the gradient factor and norm"));
  }
  ex->uploadMoments();
}

void CudaBackend::toHost() {
  ex->downloadParameters();
  ex->downloadMoments();
}

void CudaBackend::setTpAllReduce(std::function<void(float *, int64_t)> f) {
  tpAllReduce = std::move(f);
  if (ex)
    ex->tpAllReduce = tpAllReduce;
}

void CudaBackend::setTpChunks(StepContext::Chunks allGather,
                              StepContext::Chunks reduceScatter) {
  tpAllGather = std::move(allGather);
  tpReduceScatter = std::move(reduceScatter);
  if (ex) {
    ex->tpAllGather = tpAllGather;
    ex->tpReduceScatter = tpReduceScatter;
  }
}

void CudaBackend::beginStep(int64_t step, uint64_t seed) {
  ex->beginStep(step, seed);
  eventsUsed = 0;
  eventClass.clear();
}

void CudaBackend::run(const std::vector<int32_t> &instrs) {
  if (!classTimes) {
    ex->run(instrs);
    return;
  }
  // Each instruction between two events on the compute stream: the GPU's
  // own time per instruction, not the host's time to enqueue it.
  for (int32_t i : instrs) {
    if (eventsUsed == events.size()) {
      cudaEvent_t a, b;
      FRENZY_CUDA_CHECK(cudaEventCreate(&a), ctx->who());
      FRENZY_CUDA_CHECK(cudaEventCreate(&b), ctx->who());
      events.push_back({a, b});
    }
    auto [a, b] = events[eventsUsed++];
    eventClass.push_back(opClass[size_t(i)]);
    FRENZY_CUDA_CHECK(cudaEventRecord(a, stream()), ctx->who());
    ex->run({i});
    FRENZY_CUDA_CHECK(cudaEventRecord(b, stream()), ctx->who());
  }
  collectEvents();
}

void CudaBackend::collectEvents() {
  if (!eventsUsed)
    return;
  // A traced run's slices are of finished work: wait for the last event.
  ctx->synchronize(stream(), cudaTimeoutSeconds(), "the traced instructions");
  for (size_t k = 0; k < eventsUsed; ++k) {
    float ms = 0;
    FRENZY_CUDA_CHECK(
        cudaEventElapsedTime(&ms, events[k].first, events[k].second),
        ctx->who());
    classTimes[eventClass[k]] += double(ms) / 1e3;
  }
  eventsUsed = 0;
  eventClass.clear();
}

void CudaBackend::runProgramStep(int64_t step, uint64_t seed) {
  if (classTimes) { // timed per instruction, then the step's end
    beginStep(step, seed);
    std::vector<int32_t> all(size_t(hostEx->program().instrs_size()));
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = int32_t(i);
    run(order.empty() ? all : order);
    endStep(step);
    return;
  }
  ex->runStep(step, seed);
}

void CudaBackend::setScalar(int32_t id, float value) {
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(ex->deviceTensor(id), &value, 4,
                                    cudaMemcpyHostToDevice, stream()),
                    ctx->who());
  // `value` is on this stack frame: the copy must finish before it goes.
  ctx->synchronize(stream(), cudaTimeoutSeconds(), "a scalar's copy");
}

void CudaBackend::keepGradient(int32_t g) {
  // The first micro-batch's gradient buffer becomes the accumulator (one
  // set per rank, as on the CPU); a program output's is copied instead.
  if (!ex->isPersistent(g)) {
    accum[g] = {static_cast<float *>(ex->detach(g)), false};
    return;
  }
  int64_t n = hostEx->tensor(g).numel();
  auto *acc = reinterpret_cast<float *>(ctx->allocator().allocate(
      n * 4, 0, "the gradient accumulator of tensor " + std::to_string(g)));
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(acc, ex->deviceTensor(g), size_t(n) * 4,
                                    cudaMemcpyDeviceToDevice, stream()),
                    ctx->who());
  accum[g] = {acc, true};
}

void CudaBackend::addGradient(int32_t g) {
  int64_t n = hostEx->tensor(g).numel();
  float *acc = accum.at(g).first;
  check(k::binary(stream(), cpu::BinaryKind::Add, k::FloatType::F32, acc, {n},
                  acc, {n}, ex->deviceTensor(g), {n}),
        "gradient accumulation");
  ex->release(g); // no-op for a program output
}

void CudaBackend::restoreGradient(int32_t g, float factor) {
  auto it = accum.find(g);
  if (it == accum.end())
    return;
  auto [acc, copy] = it->second;
  int64_t n = hostEx->tensor(g).numel();
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(scalars, &factor, 4,
                                    cudaMemcpyHostToDevice, stream()),
                    ctx->who());
  check(k::scaleBy(stream(), acc, n, scalars), "gradient mean");
  if (copy) {
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(ex->deviceTensor(g), acc, size_t(n) * 4,
                                      cudaMemcpyDeviceToDevice, stream()),
                      ctx->who());
    ctx->allocator().free(reinterpret_cast<uint64_t>(acc));
  } else {
    ex->restore(g, acc);
  }
  // `factor` lives on this frame until the copy has been made.
  ctx->synchronize(stream(), cudaTimeoutSeconds(), "the gradient mean");
  accum.erase(it);
}

float *CudaBackend::pieceBuffer(size_t slot, int64_t n) {
  if (bufs.size() <= slot)
    bufs.resize(slot + 1, {nullptr, 0});
  auto &[p, have] = bufs[slot];
  if (have < n) {
    if (p)
      ctx->allocator().free(reinterpret_cast<uint64_t>(p));
    p = reinterpret_cast<float *>(ctx->allocator().allocate(
        std::max<int64_t>(n, 1) * 4, 0, "a DP group's gradient pieces"));
    have = n;
  }
  return p;
}

void CudaBackend::copyPiece(const plan::Piece &pc, int32_t g, float *buf,
                            bool intoAcc) {
  const Tensor &t = hostEx->tensor(g);
  auto *acc = reinterpret_cast<uint8_t *>(accum.at(g).first);
  auto *part = reinterpret_cast<uint8_t *>(buf);
  if (pc.count() == 1) {
    FRENZY_CUDA_CHECK(cudaMemcpyAsync(intoAcc ? acc : part,
                                      intoAcc ? part : acc,
                                      size_t(t.numel()) * 4,
                                      cudaMemcpyDeviceToDevice, stream()),
                      ctx->who());
    return;
  }
  // copySlice (Executor.h) as one strided copy: the same geometry.
  SliceCopy c = sliceCopy(t.shape, 4, pc.dim(), pc.blocks(), pc.index(),
                          pc.count());
  uint8_t *full = acc + c.fullOffset;
  FRENZY_CUDA_CHECK(
      intoAcc ? cudaMemcpy2DAsync(full, c.fullPitch, part, c.width, c.width,
                                  c.rows, cudaMemcpyDeviceToDevice, stream())
              : cudaMemcpy2DAsync(part, c.width, full, c.fullPitch, c.width,
                                  c.rows, cudaMemcpyDeviceToDevice, stream()),
      ctx->who());
}

double CudaBackend::sumOfSquares(const std::vector<int32_t> &ids) {
  // fp16-mixed: the norm (and the clip the runner derives from it) is of
  // the unscaled gradients; the runner sets the clip outputs itself, so
  // the executor's unscale before the clip instruction would come late.
  ex->unscaleOnce();
  if (ids.empty())
    return 0;
  // The clip kernel with no clipping gives the L2 norm of a list.
  std::vector<const float *> ptrs;
  std::vector<int64_t> sizes;
  for (int32_t g : ids) {
    ptrs.push_back(static_cast<const float *>(ex->deviceTensor(g)));
    sizes.push_back(hostEx->tensor(g).numel());
  }
  uint64_t ws = ctx->allocator().allocate(
      int64_t(std::max<size_t>(
          k::gradNormWorkspaceBytes(sizes.data(), int(sizes.size())), 1)),
      0, "the gradient norm's workspace");
  check(k::clipGradNorm(stream(), ptrs.data(), sizes.data(), int(ptrs.size()),
                        0.0, scalars + 1, scalars,
                        reinterpret_cast<void *>(ws)),
        "gradient norm");
  float norm = 0;
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(&norm, scalars + 1, 4,
                                    cudaMemcpyDeviceToHost, stream()),
                    ctx->who());
  ctx->synchronize(stream(), cudaTimeoutSeconds(), "the gradient norm");
  ctx->allocator().free(ws);
  return double(norm) * double(norm);
}

int64_t CudaBackend::peakBytes() {
  // Tensors at their step's high-water mark plus the measured context.
  return ctx->allocator().stats().stepPeakInUse + ctx->contextBytes();
}

std::string CudaBackend::memorySummary(int64_t predicted) {
  const AllocatorStats &st = ctx->allocator().stats();
  char tail[200];
  std::snprintf(tail, sizeof tail,
                "; reserved peak %lld bytes, %lld segments, %lld cache hits "
                "of %lld",
                (long long)st.peakReserved, (long long)st.segments,
                (long long)st.cacheHits, (long long)st.allocations);
  return CachingAllocator::peakReport(0, st.peakInUse, ctx->contextBytes(),
                                      predicted) +
         tail;
}

std::string CudaBackend::stepMemory(int64_t predicted) {
  return " | " + CachingAllocator::peakReport(
                     0, ctx->allocator().stats().stepPeakInUse,
                     ctx->contextBytes(), predicted);
}

std::string CudaBackend::stepNote() {
  if (!ex || !ex->skippedUpdate())
    return "";
  char s[96];
  std::snprintf(s, sizeof s, " | fp16 overflow: update skipped, loss scale %g",
                double(ex->lossScale()));
  return s;
}
