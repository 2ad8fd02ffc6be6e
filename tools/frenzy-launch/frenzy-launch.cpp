//===- frenzy-launch.cpp - run a Frenzy plan ------------------------------===//
//
// Loads plan.bin, its weights (from the ONNX model the plan names) and a
// token file, then trains for --steps steps on this process, printing the
// loss, learning rate, gradient norm and tokens/s of every step. Links no
// MLIR: the plan is all it needs.
//
//===----------------------------------------------------------------------===//
#include "ElasticHooks.h"
#include "Executor.h"
#include "LaunchOptions.h"
#include "TokenInputs.h"
#include "Trace.h"
#include "WeightExport.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

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

} // namespace

int frenzy::rt::runSingleRank(const Options &o, const plan::Plan &p) {
  std::unique_ptr<Backend> be = makeBackend(o, p, 0, selectBackend(o, p, 0));
  bool cpu = std::strcmp(be->name(), "cpu") == 0;
  if (o.profile && !cpu)
    throw RuntimeError("--profile times the CPU kernels; on the CUDA backend "
                       "use --trace=FILE (CUDA events per instruction)");
  Executor &ex = be->host();
  ex.loadWeights(o.initSeed);
  ex.setProfiling(o.profile);
  if (o.threads > 0)
    openblas_set_num_threads(int(o.threads));

  std::unique_ptr<TokenData> data;
  TokenInputs tokens;
  if (!o.data.empty()) {
    data = std::make_unique<TokenData>(o.data);
    tokens = TokenInputs::bind(ex);
    data->requireBatch(tokens.rows(), tokens.seq());
  }
  for (const auto &[name, file] : o.inputs) {
    Tensor *t = ex.input(name);
    if (!t)
      throw RuntimeError("--input: the plan has no input '" + name + "'");
    readRaw(file, *t, name);
  }
  int64_t tokensPerStep = tokens.ids ? tokens.ids->numel() : p.batch() * p.seq();
  std::printf("frenzy-launch: %s: %s, %" PRId64 " parameters, batch %" PRId64
              " x %" PRId64 ", %s, optimizer %s, %" PRId64 " steps%s\n",
              o.plan.c_str(), p.model_path().c_str(), ex.parameterCount(),
              p.batch(), p.seq(), p.precision().c_str(),
              p.optimizer().kind().empty() ? "none"
                                           : p.optimizer().kind().c_str(),
              o.steps,
              cpu ? "" : (", CUDA backend on " + be->who()).c_str());
  CheckpointOptions co = checkpointOptions(o, p, 0);
  co.beforeWrite = [&be] { be->toHost(); };
  Checkpointer ckpt(co);
  int64_t first = ckpt.resume(ex);
  be->fromHost(); // the loaded or resumed values onto the device
  if (data)
    ckpt.continueData(*data);
  if (first > 1)
    std::printf("resumed from %s at step %" PRId64 "\n", o.resumeDir.c_str(),
                first - 1);
  std::string tracePath = usableTracePath(o);
  std::unique_ptr<Trace> trace;
  std::vector<plan::Phase> phases;
  if (!tracePath.empty()) {
    trace = std::make_unique<Trace>(0);
    be->setClassTimes(trace->classSeconds());
    phases = plan::oneRankPhases(ex.program());
  }
  double totalSeconds = 0;
  int64_t predicted = p.ranks_size() ? p.ranks(0).predicted_peak_bytes() : 0;
  RankStatus status(o.statusDir, 0);
  status.update(first - 1, "starting");
  for (int64_t step = first; step <= o.steps; ++step) {
    if (data)
      tokens.fill(*data, step, tokens.rows(), 0);
    be->uploadInputs();
    auto t0 = std::chrono::steady_clock::now();
    if (trace) {
      double stepStart = trace->now(), cpuStart = Trace::cpuNow();
      be->beginStep(step, o.seed);
      for (const plan::Phase &ph : phases) {
        double start = trace->now(), cpu0 = Trace::cpuNow();
        be->run(ph.instrs);
        auto args = trace->takeClassArgs();
        args.emplace_back("cpu_us", Trace::cpuNow() - cpu0);
        trace->slice(plan::kComputeThread, ph.name, ph.cat, start,
                     std::move(args));
      }
      be->endStep(step);
      trace->slice(plan::kComputeThread, "step", "step", stepStart,
                   {{"step", double(step)},
                    {"cpu_us", Trace::cpuNow() - cpuStart}});
    } else {
      be->runProgramStep(step, o.seed);
    }
    double sec = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
    totalSeconds += sec;
    if (step % o.logEvery == 0 || step == o.steps) {
      const Tensor *loss = ex.output("loss");
      const Tensor *norm = ex.output("grad_norm");
      std::printf("step %5" PRId64 "/%" PRId64 " | loss %.6f | lr %.3e",
                  step, o.steps, loss ? loss->f32()[0] : NAN,
                  ex.learningRate(step));
      if (norm)
        std::printf(" | grad norm %.4f", norm->f32()[0]);
      std::printf("%s | %.0f tokens/s%s\n", be->stepNote().c_str(),
                  double(tokensPerStep) / sec,
                  be->stepMemory(predicted).c_str());
      std::fflush(stdout);
    }
    ckpt.afterStep(step, ex);
    status.update(step, "running");
    if (step < o.steps && o.checkpointEvery > 0 &&
        step % o.checkpointEvery == 0 && stopFileExists(o.stopFile)) {
      status.update(step, "stopped");
      printStopped(step, o.stopFile);
      return 0;
    }
  }
  ckpt.finish(o.steps, ex);
  status.update(o.steps, "done");
  if (trace) {
    writeTraceFile(tracePath, 1, int(std::max<int64_t>(0, o.steps - first + 1)),
                   {trace->serialize("rank 0 (one rank)")});
    std::printf("wrote the measured timeline to %s\n", tracePath.c_str());
  }
  if (!o.exportOnnx.empty()) {
    be->toHost();
    exportWeights(p, heldParameters(ex), o.exportOnnx);
    std::printf("exported the trained weights to %s\n", o.exportOnnx.c_str());
  }
  int64_t ran = std::max<int64_t>(0, o.steps - first + 1);
  std::printf("done: %" PRId64 " steps, %.0f tokens/s on average\n", ran,
              double(tokensPerStep * ran) / std::max(totalSeconds, 1e-9));
  std::printf("memory: %s\n", be->memorySummary(predicted).c_str());
  if (o.profile)
    printProfile(ex, totalSeconds);
  if (!o.dump.empty())
    writeOutputs(ex, o.dump);
  return 0;
}

/// `frenzy-launch --elastic ...` is frenzy-elastic (installed beside this
/// program): the supervisor that re-plans when devices come and go.
static void execElastic(int argc, char **argv) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string exe = n > 0 ? std::string(self, size_t(n)) : std::string();
  exe = exe.substr(0, exe.rfind('/') + 1) + "frenzy-elastic";
  std::vector<char *> args = {exe.data()};
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--elastic") != 0)
      args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(exe.c_str(), args.data());
  throw RuntimeError("--elastic: cannot run " + exe + ": " +
                     std::strerror(errno) + " (build the frenzy-elastic "
                     "target)");
}

int main(int argc, char **argv) {
  try {
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], "--elastic") == 0)
        execElastic(argc, argv);
    Options o = parseArgs(argc, argv);
    plan::Plan p = readPlan(o.plan);
    // A partitioned plan (stages, micro-batches: frenzy-opt --global-batch,
    // even on one device) runs its stage schedule as ranks, on either
    // backend; only a plain one-program plan runs here directly.
    if (p.ranks_size() > 1 || p.stages_size() > 0 || !o.hostfile.empty())
      return runMultiRank(o, p, argc, argv);
    if (!o.sideTasks.empty() || !o.emulateSpeed.empty() ||
        !o.sideReport.empty())
      throw RuntimeError(o.plan + ": --side-task, --emulate-speed and "
                         "--side-report work on multi-rank plans (side tasks "
                         "fill the bubbles between pipeline stages; a "
                         "one-rank plan has none)");
    return runSingleRank(o, p);
  } catch (const RuntimeError &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "frenzy-launch: error: %s\n",
                 printable(e.what()).c_str());
    return 1;
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "frenzy-launch: error: %s\n",
                 printable(e.what()).c_str());
    return 1;
  }
}
