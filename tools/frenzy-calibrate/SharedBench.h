//===- SharedBench.h - all-reduce among ranks that share cores --*- C++ -*-===//
//
// More CPU ranks than cores (frenzy-launch binds them round-robin and runs
// Open MPI with mpi_yield_when_idle): each round of an all-reduce needs
// every member to get a turn on its core, and a core reduces its members'
// data one after another. Measured with 2x and 3x as many ranks as cores
// and fitted to a cost per round per member and a reduction bandwidth per
// core (DeviceProfile::sharedAllReduceSeconds).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_CALIBRATE_SHAREDBENCH_H
#define FRENZY_TOOLS_CALIBRATE_SHAREDBENCH_H

#include <string>
#include <vector>

namespace frenzy::calibrate {

struct SharedAllReduce {
  double roundSeconds = 0, bandwidth = 0; // 0: not measured
  std::string what;                       // the measured points, a comment
};

/// Runs `mpirun ARGS` (adding --allow-run-as-root for root) and waits;
/// true when it exited 0.
bool runMpirun(std::vector<std::string> args);

/// Under mpirun with ranks bound round-robin to cores: rank 0 writes
/// "ranks small_seconds large_seconds" to `path` (the all-reduce of 16
/// bytes and of 1 MiB, from the last member's arrival to the last one's
/// return, buffers out of cache). Returns the exit code.
int measureSharedRun(const std::string &path, bool quick);

/// Starts `exe --shared-only=FILE` under mpirun for 2x and 3x `cores`
/// ranks and fits the two figures; not measured (zeros) where mpirun fails
/// or the machine has one core.
SharedAllReduce measureShared(const std::string &exe, int cores, bool quick);

} // namespace frenzy::calibrate

#endif
