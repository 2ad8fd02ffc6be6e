//===- frenzy-launch.cpp - run a Frenzy plan ------------------------------===//
//
// Loads plan.bin, its weights (from the ONNX model the plan names) and a
// token file, then trains for --steps steps on this process, printing the
// loss, learning rate, gradient norm and tokens/s of every step. Links no
// MLIR: the plan is all it needs.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "TokenData.h"

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

struct Options {
  std::string plan, data, dump;
  int64_t steps = 10, threads = 0, logEvery = 1;
  uint64_t seed = 1234;
  bool profile = false;
  std::vector<std::pair<std::string, std::string>> inputs;
};

const char *kUsage =
    "usage: frenzy-launch PLAN.bin [--steps=N] [--data=TOKENS.bin] "
    "[--input=NAME=FILE]... [--seed=N] [--threads=N] [--log-every=N] "
    "[--dump=DIR] [--profile]\n";

bool parseInt(const std::string &s, int64_t &v) {
  char *end = nullptr;
  v = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && *end == 0;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> std::string {
      size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? a.substr(n) : std::string("\x01");
    };
    auto number = [&](const char *flag, int64_t &v, int64_t min) {
      std::string s = value(flag);
      if (s == "\x01")
        return false;
      if (!parseInt(s, v) || v < min)
        throw RuntimeError(std::string(flag) + " needs an integer >= " +
                           std::to_string(min) + ", got '" + s + "'");
      return true;
    };
    int64_t seed;
    if (a == "--profile") {
      o.profile = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (number("--steps=", o.steps, 1) ||
               number("--threads=", o.threads, 1) ||
               number("--log-every=", o.logEvery, 1)) {
    } else if (number("--seed=", seed, 0)) {
      o.seed = uint64_t(seed);
    } else if (std::string s = value("--data="); s != "\x01") {
      o.data = s;
    } else if (std::string s = value("--dump="); s != "\x01") {
      o.dump = s;
    } else if (std::string s = value("--input="); s != "\x01") {
      size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0)
        throw RuntimeError("--input expects NAME=FILE, got '" + s + "'");
      o.inputs.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    } else if (a.size() > 1 && a[0] == '-') {
      throw RuntimeError("unknown option '" + a + "'\n" + kUsage);
    } else if (o.plan.empty()) {
      o.plan = a;
    } else {
      throw RuntimeError("more than one plan given ('" + o.plan + "', '" + a +
                         "')");
    }
  }
  if (o.plan.empty())
    throw RuntimeError(std::string("no plan given\n") + kUsage);
  return o;
}

plan::Plan readPlan(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(path + ": cannot open the plan");
  plan::Plan p;
  if (!p.ParseFromIstream(&in))
    throw RuntimeError(path + ": not a Frenzy plan (protobuf parse failed); "
                              "make one with frenzy-opt --cluster=... -o");
  return p;
}

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

/// The plan's token inputs: ids and targets (by name), and id-shaped inputs
/// that a plain token stream fills with defaults (token types 0, mask 1).
struct TokenInputs {
  Tensor *ids = nullptr, *targets = nullptr;
  std::vector<std::pair<Tensor *, int64_t>> defaults;
};

TokenInputs bindTokenInputs(Executor &ex) {
  TokenInputs b;
  for (const plan::Io &io : ex.program().inputs()) {
    Tensor *t = ex.input(io.name());
    const std::string &n = io.name();
    if (n == "targets" || n == "labels" || n == "target")
      b.targets = t;
    else if (n.find("token_type") != std::string::npos)
      b.defaults.emplace_back(t, 0);
    else if (n.find("mask") != std::string::npos)
      b.defaults.emplace_back(t, 1);
    else if (!b.ids && t->dtype == plan::I64)
      b.ids = t;
  }
  if (!b.ids || !b.targets || b.ids->shape != b.targets->shape ||
      b.ids->shape.size() != 2)
    throw RuntimeError("--data needs a plan with token-id and targets inputs "
                       "of one shape [B, T]; this plan's inputs do not fit "
                       "(feed them with --input=NAME=FILE instead)");
  return b;
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

int run(const Options &o) {
  plan::Plan p = readPlan(o.plan);
  if (p.ranks_size() > 1)
    throw RuntimeError(o.plan + ": the plan has " +
                       std::to_string(p.ranks_size()) + " ranks in " +
                       std::to_string(p.stages_size()) +
                       " stages; this build runs single-rank plans (make one "
                       "with a one-device cluster, e.g. examples/cpu-1.yaml)");
  Executor ex(p);
  ex.loadWeights();
  ex.setProfiling(o.profile);
  if (o.threads > 0)
    openblas_set_num_threads(int(o.threads));

  std::unique_ptr<TokenData> data;
  TokenInputs tokens;
  if (!o.data.empty()) {
    data = std::make_unique<TokenData>(o.data);
    tokens = bindTokenInputs(ex);
    data->requireBatch(tokens.ids->shape[0], tokens.ids->shape[1]);
    for (auto [t, v] : tokens.defaults)
      std::fill(t->i64(), t->i64() + t->numel(), v);
  }
  for (const auto &[name, file] : o.inputs) {
    Tensor *t = ex.input(name);
    if (!t)
      throw RuntimeError("--input: the plan has no input '" + name + "'");
    readRaw(file, *t, name);
  }
  int64_t tokensPerStep = tokens.ids ? tokens.ids->numel() : p.batch() * p.seq();
  std::printf("frenzy-launch: %s: %s, %" PRId64 " parameters, batch %" PRId64
              " x %" PRId64 ", %s, optimizer %s, %" PRId64 " steps\n",
              o.plan.c_str(), p.model_path().c_str(), ex.parameterCount(),
              p.batch(), p.seq(), p.precision().c_str(),
              p.optimizer().kind().empty() ? "none"
                                           : p.optimizer().kind().c_str(),
              o.steps);
  double totalSeconds = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    if (data)
      data->batch(step, tokens.ids->shape[0], tokens.ids->shape[1],
                  tokens.ids->i64(), tokens.targets->i64());
    auto t0 = std::chrono::steady_clock::now();
    ex.runStep(step, o.seed);
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
      std::printf(" | %.0f tokens/s\n", double(tokensPerStep) / sec);
      std::fflush(stdout);
    }
  }
  std::printf("done: %" PRId64 " steps, %.0f tokens/s on average\n", o.steps,
              double(tokensPerStep * o.steps) / totalSeconds);
  std::printf("memory: peak %" PRId64 " bytes (%.2f MiB) = persistent %" PRId64
              " (parameters, optimizer state, inputs, outputs) + activations "
              "and workspace %" PRId64 "\n",
              ex.peakBytes(), double(ex.peakBytes()) / (1 << 20),
              ex.persistentBytes(), ex.activationPeakBytes());
  if (o.profile)
    printProfile(ex, totalSeconds);
  if (!o.dump.empty())
    writeOutputs(ex, o.dump);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseArgs(argc, argv));
  } catch (const RuntimeError &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "frenzy-launch: error: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "frenzy-launch: error: %s\n", e.what());
    return 1;
  }
}
