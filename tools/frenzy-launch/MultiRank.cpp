//===- MultiRank.cpp - frenzy-launch for plans of several ranks -----------===//
//
// Alone on a machine, frenzy-launch starts the plan's ranks through mpirun
// (re-running itself with the same arguments, one process per rank); under
// mpirun or srun it runs the rank it was given. Rank 0 prints the plan, one
// line per step (loss, learning rate, gradient norm, tokens/s, every rank's
// memory high-water mark against the plan's prediction) and a summary. An
// error on any rank names the rank and ends the job (MPI_Abort), so no rank
// waits forever on a peer that is gone.
//
//===----------------------------------------------------------------------===//
#include "Checkpoint.h"
#include "ElasticHooks.h"
#include "LaunchOptions.h"
#include "plan/DeviceWorkspace.h"
#include "plan/PlanPrograms.h"
#include "MpiComm.h"
#include "RankRunner.h"
#include "SideTasks.h"
#include "TraceGather.h"
#include "WeightExport.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int);

using namespace frenzy;
using namespace frenzy::rt;

namespace {

/// One line per node: the hostfile a multi-node mpirun needs (slots = the
/// node's ranks, in rank order).
void writeHostfile(const plan::Plan &p, const std::string &path) {
  std::vector<std::pair<std::string, int>> nodes;
  for (const plan::Rank &r : p.ranks()) {
    if (nodes.empty() || nodes.back().first != r.node())
      nodes.push_back({r.node(), 0});
    ++nodes.back().second;
  }
  std::ofstream out(path);
  for (auto &[node, slots] : nodes)
    out << node << " slots=" << slots << "\n";
  if (!out)
    throw RuntimeError(path + ": cannot write the hostfile");
}

/// Replaces this process with `mpirun -np N <self> <args>`.
int relaunch(const Options &o, const plan::Plan &p) {
  std::vector<std::string> args = {"mpirun", "-np",
                                   std::to_string(p.ranks_size()),
                                   "--oversubscribe", "--bind-to", "none"};
  // More ranks than cores: each core gets every cores-th rank (bound, so the
  // cores' loads are the plan's, not the scheduler's placement), and a rank
  // waiting in MPI gives its core up to a rank bound there instead of
  // spinning on it. The predicted timeline models exactly this
  // (lib/Planning/TimelineSimulation.cpp, docs/calibration.md).
  long cores = o.cores > 0 ? long(o.cores) : sysconf(_SC_NPROCESSORS_ONLN);
  if (cores > 0 && p.ranks_size() > cores) {
    args.resize(4);
    args.insert(args.end(), {"--map-by", "core", "--bind-to",
                             "core:overload-allowed", "--mca",
                             "mpi_yield_when_idle", "1"});
  }
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    throw RuntimeError("cannot find this program's path to start its ranks");
  args.push_back(std::string(self, size_t(n)));
  args.insert(args.end(), o.argv.begin(), o.argv.end());
  std::printf("frenzy-launch: starting %d ranks on this machine:", p.ranks_size());
  for (const std::string &a : args)
    std::printf(" %s", a.c_str());
  std::printf("\n");
  std::fflush(stdout);
  std::vector<char *> cargs;
  for (std::string &a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  execvp("mpirun", cargs.data());
  throw RuntimeError("cannot run mpirun (install Open MPI: apt-get install "
                     "openmpi-bin), or start the ranks yourself with mpirun "
                     "-np " + std::to_string(p.ranks_size()));
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
    std::printf("\n");
  }
  std::fflush(stdout);
}

int runRank(const Options &o, const plan::Plan &p, Comm &comm) {
  // Every rank must pick the same backend (the CUDA ranks' communicators
  // are made collectively).
  int64_t backend[2] = {selectBackend(o, p, comm.rank()), 0};
  backend[1] = -backend[0];
  comm.allReduceMax(backend, 2);
  if (backend[0] != -backend[1])
    throw RuntimeError("the ranks chose different backends (some have a GPU "
                       "of the plan's type, some not); pass --backend=cpu");
  RankRunner runner(p, comm, [&](std::vector<int32_t> order,
                                 std::set<int32_t> freeLate, int32_t program) {
    return makeBackend(o, p, comm.rank(), int(backend[0]), std::move(order),
                       std::move(freeLate), program);
  });
  Backend &be = runner.backend();
  runner.loadWeights(o.initSeed);
  openblas_set_num_threads(int(o.threads > 0 ? o.threads : 1));
  std::unique_ptr<TokenData> data;
  data = std::make_unique<TokenData>(o.data);
  data->requireBatch(p.global_batch(), p.seq());
  runner.setData(data.get());

  CheckpointOptions co = checkpointOptions(o, p, comm.rank());
  co.barrier = [&comm] { comm.barrier(); };
  co.gather = [&comm](const std::string &s) { return gatherTrace(comm, s); };
  co.beforeWrite = [&be] { be.toHost(); };
  Checkpointer ckpt(co);
  int64_t first = ckpt.resume(runner.executor());
  be.fromHost(); // the loaded or resumed values onto the device
  ckpt.continueData(*data);
  bool root = comm.rank() == 0;
  if (root) {
    printPlan(p);
    if (std::strcmp(be.name(), "cpu") != 0)
      std::printf("frenzy-launch: %s: %d ranks, %s, CUDA backend (rank 0 on "
                  "%s)\n",
                  o.plan.c_str(), p.ranks_size(), p.precision().c_str(),
                  be.who().c_str());
    if (first > 1)
      std::printf("resumed from %s at step %" PRId64 "\n",
                  o.resumeDir.c_str(), first - 1);
  }
  // Every rank traces or none does (a traced rank passes barriers).
  std::unique_ptr<Trace> trace;
  std::string tracePath = root ? usableTracePath(o) : "";
  if (!o.trace.empty()) {
    int64_t on = root && !tracePath.empty();
    comm.allReduceMax(&on, 1);
    if (on) {
      trace = std::make_unique<Trace>(comm.rank());
      alignTraceClock(comm, *trace);
      runner.setTrace(trace.get());
    }
  }
  SideRun sideRun(o, p, runner, comm.rank());
  // Ranks beyond the node's cores take turns on them (CoreTurns.h). Not
  // with side tasks or an emulated speed: both sleep or run in a rank's
  // waits, where turns would hand its core to another rank.
  bool turns = comm.startCoreTurns(o.coreTurns && o.emulateSpeed.empty() &&
                                       o.sideTasks.empty() &&
                                       p.side_tasks_size() == 0,
                                   int(o.cores));
  if (root && turns)
    std::printf("frenzy-launch: more ranks than cores on a node: ranks "
                "sharing a core take turns on it (--core-turns=off: the "
                "scheduler decides)\n");
  int64_t tokens = p.global_batch() * p.seq();
  double total = 0;
  RankStatus status(o.statusDir, comm.rank());
  status.update(first - 1, "starting");
  for (int64_t step = first; step <= o.steps; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    double traceStart = trace ? trace->now() : 0;
    double cpuStart = trace ? Trace::cpuNow() : 0;
    StepResult r = runner.runStep(step, o.seed);
    if (trace)
      trace->slice(plan::kComputeThread, "step", "step", traceStart,
                   {{"step", double(step)},
                    {"cpu_us", Trace::cpuNow() - cpuStart}});
    double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    total += sec;
    sideRun.afterStep(step, comm);
    // The ranks' memory comes with the update's all-reduce: a gather of its
    // own would be one more collective per step, a wait of every rank at
    // the step boundary (with more ranks than cores: 17 -> 12.5 ms a step).
    std::vector<int64_t> peaks = r.peakBytes;
    if (peaks.empty()) // a plan without an update step (every rank alike)
      peaks = comm.gather(be.peakBytes());
    if (root && (step % o.logEvery == 0 || step == o.steps)) {
      std::printf("step %5" PRId64 "/%" PRId64 " | loss %.6f | lr %.3e",
                  step, o.steps, r.loss,
                  runner.executor().learningRate(step));
      if (!p.optimizer().kind().empty())
        std::printf(" | grad norm %.4f", r.gradNorm);
      std::printf("%s | %.0f tokens/s | memory MiB (rank: used/predicted)",
                  be.stepNote().c_str(), double(tokens) / sec);
      // Against the prediction as this backend counts memory (the CPU has
      // no CUDA context and no cuBLASLt workspace).
      for (size_t k = 0; k < peaks.size(); ++k)
        std::printf(" %zu:%.2f/%.2f", k, double(peaks[k]) / (1 << 20),
                    double(be.comparablePrediction(p.ranks(int(k)))) /
                        (1 << 20));
      std::printf("\n");
      std::fflush(stdout);
    }
    ckpt.afterStep(step, runner.executor());
    status.update(step, "running");
    if (step < o.steps && !o.stopFile.empty() && step % o.checkpointEvery == 0) {
      // Rank 0 decides for all: every rank stops after the same step.
      int64_t stop = root && stopFileExists(o.stopFile);
      comm.allReduceMax(&stop, 1);
      if (stop) {
        comm.stopCoreTurns();
        sideRun.finish(comm);
        status.update(step, "stopped");
        if (root)
          printStopped(step, o.stopFile);
        return 0;
      }
    }
  }
  comm.stopCoreTurns();
  // Resumed at or after --steps: nothing ran (and nothing is written).
  int64_t ran = std::max<int64_t>(0, o.steps - first + 1);
  if (trace) {
    std::vector<std::string> all =
        gatherTrace(comm, trace->serialize(plan::rankLabel(p, comm.rank())));
    if (root) {
      writeTraceFile(tracePath, p.ranks_size(), int(ran), all);
      std::printf("wrote the measured timeline of %d ranks to %s\n",
                  p.ranks_size(), tracePath.c_str());
    }
  }
  sideRun.finish(comm);
  if (root)
    std::printf("done: %" PRId64 " steps, %.0f tokens/s on average\n",
                ran, double(tokens * ran) / std::max(total, 1e-9));
  // A one-rank plan's process is the whole job: its memory as a one-rank
  // plain plan reports it (a device backend's allocator statistics).
  if (p.ranks_size() == 1)
    std::printf("memory: %s\n",
                be.memorySummary(p.ranks(0).predicted_peak_bytes()).c_str());
  ckpt.finish(o.steps, runner.executor());
  status.update(o.steps, "done");
  if (!o.exportOnnx.empty() && root) {
    // Every parameter, put together from the final checkpoint's pieces
    // (each written once, whole or as TP shards).
    exportWeights(p, readCheckpointParameters(o.checkpointDir, p.model_hash()),
                  o.exportOnnx);
    std::printf("exported the trained weights to %s\n", o.exportOnnx.c_str());
  }
  return 0;
}

} // namespace

int frenzy::rt::runMultiRank(const Options &o, const plan::Plan &p, int argc,
                             char **argv) {
  if (!o.hostfile.empty()) {
    writeHostfile(p, o.hostfile);
    std::printf("wrote %s: run mpirun -np %d --hostfile %s frenzy-launch %s "
                "...\n",
                o.hostfile.c_str(), p.ranks_size(), o.hostfile.c_str(),
                o.plan.c_str());
    return 0;
  }
  try {
    RankRunner::checkSupported(p);
  } catch (const RuntimeError &e) {
    throw RuntimeError(o.plan + ": " + e.what());
  }
  if (!launchedByMpi()) {
    // What every rank would refuse, refused once before starting them.
    if (!o.inputs.empty() || !o.dump.empty() || o.profile)
      throw RuntimeError("--input, --dump and --profile work on one-rank "
                         "plans; a multi-rank plan reads --data=TOKENS.bin");
    if (o.data.empty())
      throw RuntimeError("a multi-rank plan needs --data=TOKENS.bin");
    TokenData(o.data).requireBatch(p.global_batch(), p.seq());
    SideRun::check(o, p);
    if (!o.exportOnnx.empty() && o.checkpointDir.empty())
      throw RuntimeError("--export with a multi-rank plan gathers the weights "
                         "from the final checkpoint: give --checkpoint-dir=DIR");
    // Checkpoint directories checked once (warnings come from rank 0).
    CheckpointOptions co = checkpointOptions(o, p, 0);
    co.print = false;
    Checkpointer check(co);
    // --backend=cuda that this machine cannot honour: say so once, here.
    if (o.backend == "cuda")
      selectBackend(o, p, 0);
    return relaunch(o, p);
  }
  MpiComm comm(&argc, &argv);
  try {
    return runRank(o, p, comm);
  } catch (const std::exception &e) {
    std::fflush(stdout);
    const plan::Rank &r = p.ranks(comm.rank() < p.ranks_size() ? comm.rank() : 0);
    std::fprintf(stderr,
                 "frenzy-launch: rank %d (pipeline %d, stage %d, %s): error: "
                 "%s; ending all ranks\n",
                 comm.rank(), r.pipeline(), r.stage(),
                 printable(r.node()).c_str(), printable(e.what()).c_str());
    std::fflush(stderr);
    comm.abort(1);
  }
}
