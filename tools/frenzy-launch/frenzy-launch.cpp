//===- frenzy-launch.cpp - run a Frenzy plan ------------------------------===//
//
// Loads plan.bin, its weights (from the ONNX model the plan names) and a
// token file, then trains for --steps steps (TrainingLoop.cpp: this
// process alone for a plain plan, its rank under mpirun for a staged one,
// MultiRank.cpp), printing the loss, learning rate, gradient norm and
// tokens/s of every step. Links no MLIR: the plan is all it needs.
//
//===----------------------------------------------------------------------===//
#include "HostLaunch.h"
#include "LaunchOptions.h"
#include "SelfComm.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::rt;

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
    if (o.probeOnly) {
      // For a supervisor that lost a job: which nodes are gone (one line
      // each, naming the node; frenzy-elastic reads them).
      if (!planNamesHosts(p))
        throw RuntimeError(o.plan + ": --probe-nodes needs a plan whose "
                                    "nodes name hosts (host: per node)");
      auto failures = unreachableNodes(o, p);
      for (auto &[node, line] : failures)
        std::fprintf(stderr, "frenzy-launch: error: %s\n",
                     printable(line).c_str());
      if (failures.empty())
        std::printf("frenzy-launch: every node of %s answers\n",
                    o.plan.c_str());
      return failures.empty() ? 0 : 1;
    }
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
    SelfComm self; // a plain plan: this process alone, without MPI
    return trainLoop(o, p, self);
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
