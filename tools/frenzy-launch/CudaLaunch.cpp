//===- CudaLaunch.cpp - frenzy-launch's one-rank run on the CUDA backend --===//
//
// The CUDA twin of runSingleRank (frenzy-launch.cpp): the CPU Executor
// loads the plan and weights and feeds the tokens; CudaExecutor runs the
// steps on the GPU. Prints the same step lines as the CPU backend plus the
// device memory high-water mark of each step against the plan's
// prediction. Built only with the CUDA backend (FRENZY_CUDA_BACKEND).
//
//===----------------------------------------------------------------------===//
#include "CudaExecutor.h"
#include "CudaRankRunner.h"
#include "LaunchOptions.h"
#include "TokenInputs.h"
#include "WeightExport.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

int frenzy::rt::runCudaSingleRank(const Options &o, const plan::Plan &p) {
  // What the CUDA backend does not do yet: refused, not ignored.
  if (!o.checkpointDir.empty() || !o.resumeDir.empty() || !o.trace.empty() ||
      o.profile || !o.dump.empty())
    throw RuntimeError("--checkpoint-dir, --resume, --trace, --profile and "
                       "--dump are not supported by the CUDA backend yet "
                       "(docs/cuda.md); pass --backend=cpu");
  // A one-rank partitioned plan (frenzy-opt --global-batch on one device)
  // runs its micro-batches here; main() sends plans of more ranks to
  // runMultiRank (CudaRankRunner), so the check below only guards this
  // function's own assumptions (one stage, program 0).
  const plan::StageProgram *stage = nullptr;
  if (p.stages_size() > 0) {
    stage = &p.stages(0);
    if (p.stages_size() != 1 || p.ranks_size() != 1 || stage->program() != 0)
      throw RuntimeError("--backend=cuda: the CUDA backend runs one-rank plans "
                         "so far (docs/cuda.md); pass --backend=cpu");
    if (stage->recompute_forward())
      throw RuntimeError("--backend=cuda: full recomputation is not "
                         "supported by the CUDA backend yet; pass "
                         "--backend=cpu or plan without recomputation");
  }
  // The CPU executor is only the host side here (weights, tokens, outputs):
  // it refuses to compute anything but fp32, so it sees the plan as fp32;
  // the GPU runs the plan's own precision.
  plan::Plan hostPlan = p;
  hostPlan.set_precision("fp32");
  Executor host(hostPlan);
  host.loadWeights(o.initSeed);
  DeviceContext ctx(p, 0, o.shareGpus);
  if (!ctx.notes().empty())
    std::fputs(ctx.notes().c_str(), stdout);
  CudaExecutor ex(p, host, ctx);
  std::unique_ptr<TokenData> data;
  TokenInputs tokens;
  if (!o.data.empty()) {
    data = std::make_unique<TokenData>(o.data);
    tokens = TokenInputs::bind(host);
    data->requireBatch(stage ? p.global_batch() : tokens.rows(), tokens.seq());
  }
  if (!o.inputs.empty())
    throw RuntimeError("--input is not supported by the CUDA backend yet; "
                       "use --data=TOKENS.bin");
  int64_t tokensPerStep =
      stage ? p.global_batch() * p.seq()
            : tokens.ids ? tokens.ids->numel() : p.batch() * p.seq();
  int64_t predicted = p.ranks_size() ? p.ranks(0).predicted_peak_bytes() : 0;
  // The context as measured on this device (the plan's context_bytes is
  // its prediction, part of predicted_peak_bytes).
  int64_t context = ctx.contextBytes();
  std::printf("frenzy-launch: %s: %s, %" PRId64 " parameters, batch %" PRId64
              " x %" PRId64 ", %s, optimizer %s, %" PRId64
              " steps, CUDA backend on %s\n",
              o.plan.c_str(), p.model_path().c_str(), host.parameterCount(),
              p.batch(), p.seq(), p.precision().c_str(),
              p.optimizer().kind().empty() ? "none"
                                           : p.optimizer().kind().c_str(),
              o.steps, ctx.who().c_str());
  double total = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    if (stage) {
      ex.runMicroBatches(step, o.seed, *stage, p.micro_batch(),
                         p.total_micro_batches(), [&](int64_t mb) {
                           if (data)
                             tokens.fill(*data, step, p.global_batch(),
                                         (stage->first_micro_batch() + mb) *
                                             p.micro_batch());
                         });
    } else {
      if (data)
        tokens.fill(*data, step, tokens.rows(), 0);
      ex.uploadInputs();
      ex.runStep(step, o.seed);
    }
    double sec = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
    total += sec;
    if (step % o.logEvery == 0 || step == o.steps) {
      const Tensor *loss = host.output("loss");
      const Tensor *norm = host.output("grad_norm");
      std::printf("step %5" PRId64 "/%" PRId64 " | loss %.6f | lr %.3e",
                  step, o.steps, loss ? loss->f32()[0] : NAN,
                  host.learningRate(step));
      if (norm)
        std::printf(" | grad norm %.4f", norm->f32()[0]);
      if (ex.skippedUpdate())
        std::printf(" | fp16 overflow: update skipped, loss scale %g",
                    double(ex.lossScale()));
      std::printf(" | %.0f tokens/s | %s\n", double(tokensPerStep) / sec,
                  CachingAllocator::peakReport(
                      0, ctx.allocator().stats().stepPeakInUse, context,
                      predicted)
                      .c_str());
      std::fflush(stdout);
    }
  }
  if (!o.exportOnnx.empty()) {
    ex.downloadParameters();
    exportWeights(p, heldParameters(host), o.exportOnnx);
    std::printf("exported the trained weights to %s\n", o.exportOnnx.c_str());
  }
  const AllocatorStats &st = ctx.allocator().stats();
  std::printf("done: %" PRId64 " steps, %.0f tokens/s on average\n", o.steps,
              double(tokensPerStep * o.steps) / std::max(total, 1e-9));
  std::printf("memory: %s; reserved peak %" PRId64 " bytes, %" PRId64
              " segments, %" PRId64 " cache hits of %" PRId64 "\n",
              CachingAllocator::peakReport(0, st.peakInUse, context, predicted)
                  .c_str(),
              st.peakReserved, st.segments, st.cacheHits, st.allocations);
  return 0;
}

int frenzy::rt::runCudaRank(const Options &o, const plan::Plan &p, int rank) {
  if (!o.checkpointDir.empty() || !o.resumeDir.empty() || !o.trace.empty() ||
      !o.exportOnnx.empty())
    throw RuntimeError("--checkpoint-dir, --resume, --trace and --export are "
                       "not supported by the CUDA backend's multi-rank runs "
                       "yet (docs/cuda.md); pass --backend=cpu");
  CudaRankRunner runner(p, rank, o.shareGpus);
  runner.loadWeights(o.initSeed);
  TokenData data(o.data);
  data.requireBatch(p.global_batch(), p.seq());
  runner.setData(&data);
  bool root = rank == 0;
  if (!runner.device().notes().empty())
    std::fputs(runner.device().notes().c_str(), stdout);
  if (root)
    std::printf("frenzy-launch: %s: %d ranks, %s, CUDA backend (rank 0 on "
                "%s)\n",
                o.plan.c_str(), p.ranks_size(), p.precision().c_str(),
                runner.device().who().c_str());
  int64_t tokens = p.global_batch() * p.seq();
  double total = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    CudaStepResult r = runner.runStep(step, o.seed);
    double sec = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
    total += sec;
    // Every rank's peak (tensors + measured context) for the step line.
    int64_t mine = runner.device().allocator().stats().stepPeakInUse +
                   runner.device().contextBytes();
    std::vector<int64_t> peaks(size_t(p.ranks_size()), 0);
    MPI_Gather(&mine, 1, MPI_INT64_T, peaks.data(), 1, MPI_INT64_T, 0,
               MPI_COMM_WORLD);
    if (root && (step % o.logEvery == 0 || step == o.steps)) {
      std::printf("step %5" PRId64 "/%" PRId64 " | loss %.6f | lr %.3e", step,
                  o.steps, r.loss, runner.host().learningRate(step));
      if (!p.optimizer().kind().empty())
        std::printf(" | grad norm %.4f", r.gradNorm);
      std::printf(" | %.0f tokens/s | device memory MiB (rank: used/"
                  "predicted)",
                  double(tokens) / sec);
      for (int k = 0; k < p.ranks_size(); ++k)
        std::printf(" %d:%.2f/%.2f", k, double(peaks[size_t(k)]) / (1 << 20),
                    double(p.ranks(k).predicted_peak_bytes()) / (1 << 20));
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (root)
    std::printf("done: %" PRId64 " steps, %.0f tokens/s on average\n",
                o.steps, double(tokens * o.steps) / std::max(total, 1e-9));
  return 0;
}
