//===- LaunchOptions.cpp - frenzy-launch's command line -------------------===//
#include "LaunchOptions.h"

#include "PlanLoader.h"
#include "ProbeBack.h"
#include "Tensor.h"
#include "Trace.h"
#include "plan/PlanVersion.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace frenzy::rt {

namespace {

const char *kUsage =
    "usage: frenzy-launch PLAN.bin [--steps=N] [--data=TOKENS.bin] "
    "[--input=NAME=FILE]... [--seed=N] [--threads=N] [--log-every=N] "
    "[--dump=DIR] [--profile] [--checkpoint-dir=DIR] [--checkpoint-every=N] "
    "[--resume=DIR] [--export=OUT.onnx] [--emit-hostfile=FILE] "
    "[--init=onnx|seed] [--trace=FILE.json] [--status-dir=DIR] "
    "[--stop-file=FILE] [--side-task=[NAME=]KIND:OPTS]... "
    "[--emulate-speed[=RANK:FACTOR,...|plan:BASE|scale:S]] "
    "[--side-report=FILE.json] [--backend=cpu|cuda] [--share-gpus] "
    "[--cores=N] [--core-turns=auto|off] [--launch-agent=CMD] "
    "[--launch-timeout=SECONDS] [--comm-timeout=SECONDS] [--probe-nodes]\n"
    "       frenzy-launch --elastic --cluster=C.yaml MODEL.onnx ... (runs "
    "frenzy-elastic: re-plans when devices leave or join)\n"
    "A plan of several ranks starts them through mpirun, unless this process "
    "was itself started by mpirun or srun (then it runs the rank it is given); "
    "when the plan's nodes name hosts, the ranks start on those hosts "
    "(docs/multinode.md).\n";

} // namespace

static bool parseInt(const std::string &s, int64_t &v) {
  char *end = nullptr;
  v = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && *end == 0;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  o.argv.assign(argv + 1, argv + argc);
  bool initFromSeed = false;
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
    } else if (a == "--share-gpus") {
      o.shareGpus = true;
    } else if (std::string s = value("--backend="); s != "\x01") {
      if (s != "cpu" && s != "cuda")
        throw RuntimeError("--backend must be cpu or cuda, got '" + s + "'");
      o.backend = s;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (number("--steps=", o.steps, 1) ||
               number("--threads=", o.threads, 1) ||
               number("--log-every=", o.logEvery, 1) ||
               number("--checkpoint-every=", o.checkpointEvery, 1) ||
               number("--cores=", o.cores, 1) ||
               number("--launch-timeout=", o.launchTimeout, 1)) {
    } else if (number("--comm-timeout=", o.commTimeout, 0)) {
      // The transports read it from the environment (Comm.h); mpirun passes
      // it on to remote ranks (-x), and the ranks parse this line too.
      ::setenv("FRENZY_COMM_TIMEOUT", std::to_string(o.commTimeout).c_str(), 1);
    } else if (a == "--probe-nodes") {
      o.probeOnly = true;
    } else if (std::string s = value("--launch-agent="); s != "\x01") {
      if (s.empty())
        throw RuntimeError("--launch-agent needs a command (e.g. --launch-agent="
                           "\"ssh -o BatchMode=yes\")");
      o.launchAgent = s;
    } else if (std::string s = value("--launch-probe="); s != "\x01") {
      // Run on a node by the launcher before mpirun (ProbeBack.h): nothing
      // else of the command line matters.
      std::exit(probeBack(s));
    } else if (std::string s = value("--core-turns="); s != "\x01") {
      if (s != "auto" && s != "off")
        throw RuntimeError("--core-turns must be auto or off, got '" + s + "'");
      o.coreTurns = s == "auto";
    } else if (number("--seed=", seed, 0)) {
      o.seed = uint64_t(seed);
    } else if (std::string s = value("--data="); s != "\x01") {
      o.data = s;
    } else if (std::string s = value("--dump="); s != "\x01") {
      o.dump = s;
    } else if (std::string s = value("--checkpoint-dir="); s != "\x01") {
      o.checkpointDir = s;
    } else if (std::string s = value("--init="); s != "\x01") {
      if (s != "onnx" && s != "seed")
        throw RuntimeError("--init must be onnx (the model's weights) or seed "
                           "(matrices drawn from --seed), got '" + s + "'");
      initFromSeed = s == "seed";
    } else if (std::string s = value("--resume="); s != "\x01") {
      o.resumeDir = s;
    } else if (std::string s = value("--export="); s != "\x01") {
      o.exportOnnx = s;
    } else if (std::string s = value("--trace="); s != "\x01") {
      if (s.empty())
        throw RuntimeError("--trace needs a file name (--trace=run.json)");
      o.trace = s;
    } else if (std::string s = value("--status-dir="); s != "\x01") {
      o.statusDir = s;
    } else if (std::string s = value("--stop-file="); s != "\x01") {
      o.stopFile = s;
    } else if (std::string s = value("--emit-hostfile="); s != "\x01") {
      o.hostfile = s;
    } else if (a == "--emulate-speed") {
      o.emulateSpeed = "plan";
    } else if (std::string s = value("--emulate-speed="); s != "\x01") {
      if (s.empty())
        throw RuntimeError("--emulate-speed= needs RANK:FACTOR,... or "
                           "plan:BASE (or write --emulate-speed alone for the "
                           "plan's timeline)");
      o.emulateSpeed = s;
    } else if (std::string s = value("--side-task="); s != "\x01") {
      if (s.empty())
        throw RuntimeError("--side-task needs a task: --side-task=pagerank, "
                           "--side-task=resize:images=64, ... "
                           "(docs/sidetasks.md)");
      o.sideTasks.push_back(s);
    } else if (std::string s = value("--side-report="); s != "\x01") {
      if (s.empty())
        throw RuntimeError("--side-report needs a file name "
                           "(--side-report=side.json)");
      o.sideReport = s;
    } else if (std::string s = value("--input="); s != "\x01") {
      size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0)
        throw RuntimeError("--input expects NAME=FILE, got '" + s + "'");
      o.inputs.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    } else if (a.size() > 1 && a[0] == '-') {
      throw RuntimeError("unknown option '" + a +
                         "' (frenzy-launch --help lists the options)");
    } else if (o.plan.empty()) {
      o.plan = a;
    } else {
      throw RuntimeError("more than one plan given ('" + o.plan + "', '" + a +
                         "')");
    }
  }
  if (o.plan.empty())
    throw RuntimeError("no plan given (frenzy-launch --help lists the options)");
  if (initFromSeed)
    o.initSeed = o.seed;
  // --share-gpus only changes how CUDA ranks pick a device; accepting it
  // with the CPU backend would suggest it did something there.
  if (o.shareGpus && o.backend == "cpu")
    throw RuntimeError("--share-gpus maps CUDA ranks onto fewer GPUs; it has "
                       "no meaning with --backend=cpu: drop one of them");
  if (o.checkpointEvery > 0 && o.checkpointDir.empty())
    throw RuntimeError("--checkpoint-every needs --checkpoint-dir=DIR");
  if (!o.stopFile.empty() && o.checkpointEvery == 0)
    throw RuntimeError("--stop-file is looked for after each checkpoint: give "
                       "--checkpoint-every=N");
  return o;
}

std::string usableTracePath(const Options &o) {
  if (o.trace.empty())
    return "";
  std::string why = traceFileProblem(o.trace, {o.plan, o.data});
  if (why.empty())
    return o.trace;
  std::fprintf(stderr,
               "frenzy-launch: warning: --trace=%s: %s; running without a "
               "trace\n",
               o.trace.c_str(), why.c_str());
  return "";
}

plan::Plan readPlan(const std::string &path) { return loadPlanFile(path); }

CheckpointOptions checkpointOptions(const Options &o, const plan::Plan &p,
                                    int rank) {
  CheckpointOptions c;
  c.dir = o.checkpointDir;
  c.every = o.checkpointEvery;
  c.resumeDir = o.resumeDir;
  if (!plan::hashFile(o.plan, c.planHash))
    throw RuntimeError(o.plan + ": cannot read the plan");
  c.plan = &p;
  c.rank = rank;
  c.seed = o.seed;
  c.print = rank == 0;
  return c;
}

} // namespace frenzy::rt
