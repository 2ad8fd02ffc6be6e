//===- MultiRank.cpp - frenzy-launch for plans of several ranks -----------===//
//
// Alone on a machine, frenzy-launch starts the plan's ranks through mpirun
// (re-running itself with the same arguments, one process per rank); under
// mpirun or srun it runs the rank it was given through the training loop
// (TrainingLoop.cpp; rank 0 prints the plan, one line per step with every
// rank's memory high-water mark against the plan's prediction, and a
// summary). An error on any rank names the rank and ends the job (MPI_Abort), so no rank
// waits forever on a peer that is gone.
//
//===----------------------------------------------------------------------===//
#include "Checkpoint.h"
#include "ElasticHooks.h"
#include "HostLaunch.h"
#include "LaunchOptions.h"
#include "plan/DeviceWorkspace.h"
#include "plan/PlanPrograms.h"
#include "MpiComm.h"
#include "RankRunner.h"
#include "SideTasks.h"
#include "SlurmStep.h"
#include "TraceGather.h"
#include "WeightExport.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <unistd.h>

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
    return planNamesHosts(p) ? launchOnHosts(o, p) : relaunch(o, p);
  }
  try {
    checkOnPlanNode(p);
    checkSlurmStep();
  } catch (const RuntimeError &e) {
    // Said before the job is cancelled, which may end this process too.
    std::fflush(stdout);
    std::fprintf(stderr, "frenzy-launch: error: %s\n",
                 printable(e.what()).c_str());
    std::fflush(stderr);
    cancelSlurmJob();
    return 1;
  }
  MpiComm comm(&argc, &argv);
  try {
    return trainLoop(o, p, comm);
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
