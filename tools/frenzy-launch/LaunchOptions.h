//===- LaunchOptions.h - frenzy-launch's command line -----------*- C++ -*-===//
#ifndef FRENZY_TOOLS_LAUNCH_LAUNCHOPTIONS_H
#define FRENZY_TOOLS_LAUNCH_LAUNCHOPTIONS_H

#include "backend/Backend.h"
#include "Checkpoint.h"
#include "plan.pb.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace frenzy::rt {

struct Options {
  std::string plan, data, dump;
  int64_t steps = 10, threads = 0, logEvery = 1;
  uint64_t seed = 1234;
  bool profile = false;
  std::vector<std::pair<std::string, std::string>> inputs;
  // Checkpoints: written every checkpointEvery steps (0: only at the end)
  // when checkpointDir is set; resume from the latest one in resumeDir.
  std::string checkpointDir, resumeDir, exportOnnx, hostfile;
  std::string trace; // --trace=FILE: the measured timeline (Chrome JSON)
  // frenzy-elastic's hooks (ElasticHooks.h): per-rank status files, and a
  // file whose presence stops the job after its next checkpoint.
  std::string statusDir, stopFile;
  int64_t checkpointEvery = 0;
  std::optional<uint64_t> initSeed; // --init=seed: matrices from --seed
  // --backend=cpu|cuda ("": by the plan's GPU type and this machine) and
  // --share-gpus (several ranks per GPU, for tests); docs/cuda.md.
  std::string backend;
  bool shareGpus = false;
  // Side tasks (issue 14): --side-task=[NAME=]KIND:... (SideTaskSpec.h),
  // --emulate-speed[=R:F,...] ("plan": factors from the plan), and
  // --side-report=FILE (per rank and step: times, harvest, delay; JSON).
  std::vector<std::string> sideTasks;
  std::string emulateSpeed, sideReport;
  // CPU ranks of one node beyond its cores: --cores=N (default: the
  // machine's online CPUs) and whether they take turns on them
  // (--core-turns=auto|off; runtime/comm/CoreTurns.h).
  int64_t cores = 0;
  bool coreTurns = true;
  // Plans whose nodes name hosts (HostLaunch.h): the command that starts a
  // remote Open MPI daemon (--launch-agent=CMD, "": Open MPI's ssh) and the
  // seconds a node has to answer it and start (--launch-timeout=SECONDS).
  std::string launchAgent;
  int64_t launchTimeout = 60;
  // Seconds a rank waits for a peer before it ends the job naming it
  // (--comm-timeout=SECONDS, else FRENZY_COMM_TIMEOUT; -1: neither given).
  // Also how long mpirun gets to end a job after a rank's error before the
  // launcher ends it (a node whose link is down never confirms).
  int64_t commTimeout = -1;
  // --probe-nodes: only check that every plan node answers (HostLaunch.h).
  bool probeOnly = false;
  std::vector<std::string> argv; // as given, for relaunching under mpirun
};

Options parseArgs(int argc, char **argv);
/// The checkpoint settings of the command line for one rank of plan `p`
/// (which must outlive them).
CheckpointOptions checkpointOptions(const Options &o, const plan::Plan &p,
                                    int rank);
plan::Plan readPlan(const std::string &path);

/// The trace file, or "" when none was asked for or it cannot be written
/// (then one line says why and the run goes on untraced).
std::string usableTracePath(const Options &o);

/// The backend rank `rank` runs on (cuda::Backend as an int: 0 cpu, 1
/// cuda); prints the CUDA device notes. Throws for a --backend=cuda this
/// machine or build cannot honour.
int selectBackend(const Options &o, const plan::Plan &p, int rank);
/// Whether this binary has the CUDA backend.
bool haveCudaBackend();
/// Rank `rank`'s backend (`backend` as selectBackend returns it) for the
/// instructions it runs (Executor.h's arguments); prints the device notes.
/// Throws one line for a backend this build lacks.
std::unique_ptr<Backend> makeBackend(const Options &o, const plan::Plan &p,
                                     int rank, int backend,
                                     std::vector<int32_t> order = {},
                                     std::set<int32_t> freeLate = {},
                                     int32_t program = 0);

/// The training loop of every run (TrainingLoop.cpp): a plain one-rank
/// plan's whole program with `comm` a world of one, or this process's rank
/// of a staged plan (`comm` the job's).
int trainLoop(const Options &o, const plan::Plan &p, Comm &comm);
/// Multi-rank plans: started by mpirun or srun, run the rank given;
/// otherwise start the plan's ranks on this machine through mpirun.
int runMultiRank(const Options &o, const plan::Plan &p, int argc, char **argv);

} // namespace frenzy::rt

#endif
