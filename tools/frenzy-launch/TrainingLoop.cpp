//===- TrainingLoop.cpp - frenzy-launch's one training loop ---------------===//
//
// Every run goes through trainLoop: one-rank plain plans (the whole program
// each step, this process alone, with --input/--dump/--profile) and every
// rank of a staged plan (RankRunner over the rank's stream, under mpirun),
// on either backend (runtime/backend/Backend.h). Data feeding, the step
// lines, checkpoints (write, resume, reshard), the elastic hooks (status
// files, stop file), --trace, side tasks and the memory report are written
// once here. A plain plan's lines are those it printed before the loops
// were one (tests check them): its header names the model, its step line
// has no memory column, and its summary has the memory breakdown.
//
//===----------------------------------------------------------------------===//
#include "Checkpoint.h"
#include "ElasticHooks.h"
#include "LaunchOptions.h"
#include "RankRunner.h"
#include "SideTasks.h"
#include "TokenInputs.h"
#include "Trace.h"
#include "TraceGather.h"
#include "WeightExport.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

extern "C" void openblas_set_num_threads(int);

using namespace frenzy;
using namespace frenzy::rt;

namespace {

void readRaw(const std::string &path, Tensor &t, const std::string &name) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw RuntimeError(path + ": cannot open input '" + name + "'");
  int64_t size = in.tellg();
  if (size != t.bytes())
    throw RuntimeError(path + ": " + std::to_string(size) +
                       " bytes, but input '" + name + "' is " + t.describe() +
                       " (" + std::to_string(t.bytes()) + " bytes)");
  in.seekg(0);
  in.read(static_cast<char *>(t.data()), size);
}

void writeOutputs(const Executor &ex, const std::string &dir) {
  ::mkdir(dir.c_str(), 0755);
  for (const plan::Io &io : ex.program().outputs()) {
    const Tensor *t = ex.output(io.name());
    std::string file = dir + "/" + io.name() + ".bin";
    std::ofstream out(file, std::ios::binary);
    if (!out.write(static_cast<const char *>(t->data()), t->bytes()))
      throw RuntimeError(file + ": cannot write");
  }
}

/// Kernel time by kernel name, largest first.
void printProfile(const Executor &ex, double totalSeconds) {
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> rows(
      ex.profile().begin(), ex.profile().end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.first > b.second.first;
  });
  std::printf("%-28s %10s %8s %7s\n", "kernel", "seconds", "calls", "share");
  for (const auto &[name, t] : rows)
    std::printf("%-28s %10.4f %8" PRId64 " %6.1f%%\n", name.c_str(), t.first,
                t.second, 100.0 * t.first / totalSeconds);
}

void printPlan(const plan::Plan &p) {
  std::printf("frenzy-launch: %d ranks, %d stages, micro-batch %" PRId64
              ", global batch %" PRId64 " (%" PRId64 " micro-batches), "
              "schedule %s\n",
              p.ranks_size(), p.stages_size(), p.micro_batch(),
              p.global_batch(), p.total_micro_batches(),
              p.ranks(0).schedule().c_str());
  for (const plan::StageProgram &sp : p.stages()) {
    std::printf("  pipeline %d stage %d: layers %" PRId64 "-%" PRId64 "%s%s, "
                "%" PRId64 " micro-batches,%s ranks",
                sp.pipeline(), sp.stage(), sp.first_layer(), sp.last_layer(),
                sp.embed() ? " +embed" : "", sp.head() ? " +head" : "",
                sp.micro_batches(),
                sp.recompute_forward() ? " full recompute," : "");
    for (int32_t r : sp.ranks())
      std::printf(" %d (%s:%s:%d)", r, p.ranks(r).node().c_str(),
                  p.ranks(r).gpu_type().c_str(), p.ranks(r).device());
    // A program split with sequence parallelism reduce-scatters where TP
    // alone all-reduces.
    const plan::Program *prog = plan::programAt(p, sp.program());
    bool seqParallel =
        prog && std::any_of(prog->instrs().begin(), prog->instrs().end(),
                            [](const plan::Instr &in) {
                              return in.op() == "sp_reduce_scatter";
                            });
    std::printf("%s\n", seqParallel ? ", sequence parallel" : "");
  }
  std::fflush(stdout);
}

/// A plain plan's step: the whole program, traced by phases when asked.
void plainStep(Backend &be, int64_t step, uint64_t seed, Trace *trace,
               const std::vector<plan::Phase> &phases) {
  if (!trace) {
    be.runProgramStep(step, seed);
    return;
  }
  be.beginStep(step, seed);
  for (const plan::Phase &ph : phases) {
    double start = trace->now(), cpu0 = Trace::cpuNow();
    be.run(ph.instrs);
    auto args = trace->takeClassArgs();
    args.emplace_back("cpu_us", Trace::cpuNow() - cpu0);
    trace->slice(plan::kComputeThread, ph.name, ph.cat, start,
                 std::move(args));
  }
  be.endStep(step);
}

} // namespace

int frenzy::rt::trainLoop(const Options &o, const plan::Plan &p, Comm &comm) {
  // A plain plan (no stages) runs its whole program here; a staged one its
  // rank's stream. Every rank must pick the same backend (a device
  // transport's communicators are made collectively).
  const bool plain = p.stages_size() == 0;
  int64_t backend[2] = {selectBackend(o, p, comm.rank()), 0};
  backend[1] = -backend[0];
  comm.allReduceMax(backend, 2);
  if (backend[0] != -backend[1])
    throw RuntimeError("the ranks chose different backends (some have a GPU "
                       "of the plan's type, some not); pass --backend=cpu");
  std::unique_ptr<RankRunner> runner;
  std::unique_ptr<Backend> own;
  if (plain)
    own = makeBackend(o, p, 0, int(backend[0]));
  else
    runner = std::make_unique<RankRunner>(
        p, comm, [&](std::vector<int32_t> order, std::set<int32_t> freeLate,
                     int32_t program) {
          return makeBackend(o, p, comm.rank(), int(backend[0]),
                             std::move(order), std::move(freeLate), program);
        });
  Backend &be = plain ? *own : runner->backend();
  Executor &ex = be.host();
  bool cpu = std::strcmp(be.name(), "cpu") == 0, root = comm.rank() == 0;
  if (o.profile && !cpu)
    throw RuntimeError("--profile times the CPU kernels; on the CUDA backend "
                       "use --trace=FILE (CUDA events per instruction)");
  ex.loadWeights(o.initSeed);
  ex.setProfiling(o.profile);
  if (o.threads > 0 || !plain)
    openblas_set_num_threads(int(o.threads > 0 ? o.threads : 1));

  // Tokens: a plain plan reads its batch rows itself; a rank its
  // micro-batches' rows of the global batch.
  std::unique_ptr<TokenData> data;
  TokenInputs tokens;
  if (!o.data.empty()) {
    data = std::make_unique<TokenData>(o.data);
    if (plain) {
      tokens = TokenInputs::bind(ex);
      data->requireBatch(tokens.rows(), tokens.seq());
    } else {
      data->requireBatch(p.global_batch(), p.seq());
      runner->setData(data.get());
    }
  }
  for (const auto &[name, file] : o.inputs) {
    Tensor *t = ex.input(name);
    if (!t)
      throw RuntimeError("--input: the plan has no input '" + name + "'");
    readRaw(file, *t, name);
  }
  int64_t tokensPerStep = !plain      ? p.global_batch() * p.seq()
                          : tokens.ids ? tokens.ids->numel()
                                       : p.batch() * p.seq();
  if (plain)
    std::printf("frenzy-launch: %s: %s, %" PRId64 " parameters, batch %" PRId64
                " x %" PRId64 ", %s, optimizer %s, %" PRId64 " steps%s\n",
                o.plan.c_str(), p.model_path().c_str(), ex.parameterCount(),
                p.batch(), p.seq(), p.precision().c_str(),
                p.optimizer().kind().empty() ? "none"
                                             : p.optimizer().kind().c_str(),
                o.steps,
                cpu ? "" : (", CUDA backend on " + be.who()).c_str());

  CheckpointOptions co = checkpointOptions(o, p, comm.rank());
  co.barrier = [&comm] { comm.barrier(); };
  co.gather = [&comm](const std::string &s) { return gatherTrace(comm, s); };
  co.beforeWrite = [&be] { be.toHost(); };
  Checkpointer ckpt(co);
  int64_t first = ckpt.resume(ex);
  be.fromHost(); // the loaded or resumed values onto the device
  if (data)
    ckpt.continueData(*data);
  if (root && !plain) {
    printPlan(p);
    if (!cpu)
      std::printf("frenzy-launch: %s: %d ranks, %s, CUDA backend (rank 0 on "
                  "%s)\n",
                  o.plan.c_str(), p.ranks_size(), p.precision().c_str(),
                  be.who().c_str());
  }
  if (root && first > 1)
    std::printf("resumed from %s at step %" PRId64 "\n", o.resumeDir.c_str(),
                first - 1);

  // Every rank traces or none does (a traced rank passes barriers).
  std::unique_ptr<Trace> trace;
  std::vector<plan::Phase> phases;
  std::string tracePath = root ? usableTracePath(o) : "";
  if (!o.trace.empty()) {
    int64_t on = root && !tracePath.empty();
    comm.allReduceMax(&on, 1);
    if (on) {
      trace = std::make_unique<Trace>(comm.rank());
      if (plain) {
        be.setClassTimes(trace->classSeconds());
        phases = plan::oneRankPhases(ex.program());
      } else {
        alignTraceClock(comm, *trace);
        runner->setTrace(trace.get());
      }
    }
  }
  std::unique_ptr<SideRun> sideRun;
  if (runner)
    sideRun = std::make_unique<SideRun>(o, p, *runner, comm.rank());
  // Ranks beyond the node's cores take turns on them (CoreTurns.h). Not
  // with side tasks or an emulated speed: both sleep or run in a rank's
  // waits, where turns would hand its core to another rank.
  bool turns = !plain &&
               comm.startCoreTurns(o.coreTurns && o.emulateSpeed.empty() &&
                                       o.sideTasks.empty() &&
                                       p.side_tasks_size() == 0,
                                   int(o.cores));
  if (root && turns)
    std::printf("frenzy-launch: more ranks than cores on a node: ranks "
                "sharing a core take turns on it (--core-turns=off: the "
                "scheduler decides)\n");
  int64_t predicted = p.ranks_size() ? p.ranks(0).predicted_peak_bytes() : 0;
  double total = 0;
  RankStatus status(o.statusDir, comm.rank());
  status.update(first - 1, "starting");
  auto stopAll = [&](int64_t step) {
    comm.stopCoreTurns();
    if (sideRun)
      sideRun->finish(comm);
    status.update(step, "stopped");
    if (root)
      printStopped(step, o.stopFile);
  };
  for (int64_t step = first; step <= o.steps; ++step) {
    if (plain && data)
      tokens.fill(*data, step, tokens.rows(), 0);
    if (plain)
      be.uploadInputs();
    auto t0 = std::chrono::steady_clock::now();
    double traceStart = trace ? trace->now() : 0;
    double cpuStart = trace ? Trace::cpuNow() : 0;
    StepResult r;
    if (plain)
      plainStep(be, step, o.seed, trace.get(), phases);
    else
      r = runner->runStep(step, o.seed);
    if (trace)
      trace->slice(plan::kComputeThread, "step", "step", traceStart,
                   {{"step", double(step)},
                    {"cpu_us", Trace::cpuNow() - cpuStart}});
    double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    total += sec;
    if (sideRun)
      sideRun->afterStep(step, comm);
    // A rank's memory comes with the update's all-reduce: a gather of its
    // own would be one more collective per step, a wait of every rank at
    // the step boundary (with more ranks than cores: 17 -> 12.5 ms a step).
    std::vector<int64_t> peaks = r.peakBytes;
    if (!plain && peaks.empty()) // no update step (every rank alike)
      peaks = comm.gather(be.peakBytes());
    if (root && (step % o.logEvery == 0 || step == o.steps)) {
      const Tensor *loss = ex.output("loss");
      const Tensor *norm = ex.output("grad_norm");
      std::printf("step %5" PRId64 "/%" PRId64 " | loss %.6f | lr %.3e", step,
                  o.steps,
                  plain ? (loss ? loss->f32()[0] : NAN) : r.loss,
                  ex.learningRate(step));
      if (plain ? norm != nullptr : !p.optimizer().kind().empty())
        std::printf(" | grad norm %.4f", plain ? norm->f32()[0] : r.gradNorm);
      std::printf("%s | %.0f tokens/s", be.stepNote().c_str(),
                  double(tokensPerStep) / sec);
      if (plain)
        std::printf("%s", be.stepMemory(predicted).c_str());
      else // against the prediction as this backend counts memory
        std::printf(" | memory MiB (rank: used/predicted)");
      for (size_t k = 0; k < peaks.size(); ++k)
        std::printf(" %zu:%.2f/%.2f", k, double(peaks[k]) / (1 << 20),
                    double(be.comparablePrediction(p.ranks(int(k)))) /
                        (1 << 20));
      std::printf("\n");
      std::fflush(stdout);
    }
    ckpt.afterStep(step, ex);
    status.update(step, "running");
    holdForTest(step, &comm);
    if (step < o.steps && o.checkpointEvery > 0 && !o.stopFile.empty() &&
        step % o.checkpointEvery == 0) {
      // Rank 0 decides for all: every rank stops after the same step.
      int64_t stop = root && stopFileExists(o.stopFile);
      comm.allReduceMax(&stop, 1);
      if (stop) {
        stopAll(step);
        return 0;
      }
    }
  }
  comm.stopCoreTurns();
  // Resumed at or after --steps: nothing ran (and nothing is written).
  int64_t ran = std::max<int64_t>(0, o.steps - first + 1);
  if (plain) // (its checkpoint before its trace, as before the merge)
    ckpt.finish(o.steps, ex);
  if (trace) {
    std::vector<std::string> all = gatherTrace(
        comm, trace->serialize(plain ? "rank 0 (one rank)"
                                     : plan::rankLabel(p, comm.rank())));
    if (root) {
      writeTraceFile(tracePath, p.ranks_size() ? p.ranks_size() : 1, int(ran),
                     all);
      if (plain)
        std::printf("wrote the measured timeline to %s\n", tracePath.c_str());
      else
        std::printf("wrote the measured timeline of %d ranks to %s\n",
                    p.ranks_size(), tracePath.c_str());
    }
  }
  if (sideRun)
    sideRun->finish(comm);
  if (plain && !o.exportOnnx.empty()) {
    be.toHost();
    exportWeights(p, heldParameters(ex), o.exportOnnx);
    std::printf("exported the trained weights to %s\n", o.exportOnnx.c_str());
  }
  if (root)
    std::printf("done: %" PRId64 " steps, %.0f tokens/s on average\n", ran,
                double(tokensPerStep * ran) / std::max(total, 1e-9));
  if (!plain)
    ckpt.finish(o.steps, ex);
  status.update(o.steps, "done");
  if (!plain && !o.exportOnnx.empty() && root) {
    // Every parameter, put together from the final checkpoint's pieces
    // (each written once, whole or as TP shards).
    exportWeights(p, readCheckpointParameters(o.checkpointDir, p.model_hash()),
                  o.exportOnnx);
    std::printf("exported the trained weights to %s\n", o.exportOnnx.c_str());
  }
  // A one-rank job's process is the whole job: its memory breakdown.
  if (p.ranks_size() <= 1)
    std::printf("memory: %s\n", be.memorySummary(predicted).c_str());
  if (o.profile)
    printProfile(ex, total);
  if (!o.dump.empty())
    writeOutputs(ex, o.dump);
  return 0;
}
