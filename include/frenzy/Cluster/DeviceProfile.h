//===- DeviceProfile.h - measured speeds of one device type -----*- C++ -*-===//
//
// What frenzy-calibrate measures on a device and the cost model then uses
// instead of datasheet figures times default efficiencies: GEMM rate by
// size, attention rate, memory-bound rate by bytes moved, a fixed cost per
// kernel launch, and per link kind the latency and bandwidth of a transfer
// and of an all-reduce. A cluster file's GPU type names its profile
// (`profile: FILE`); types without one keep the defaults
// (DeviceProfile::fromDatasheet, docs/partitioner.md). MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_CLUSTER_DEVICEPROFILE_H
#define FRENZY_CLUSTER_DEVICEPROFILE_H

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace frenzy {

struct GpuType;

/// The profile format version frenzy-calibrate writes (a profile of
/// another version is refused: re-run frenzy-calibrate).
inline constexpr int kDeviceProfileVersion = 1;

/// Rate measured at a size: x is flops (contractions) or bytes (memory).
struct RatePoint {
  double size = 0, rate = 0; // rate: flop/s or byte/s
};

struct LinkProfile {
  double latency = 10e-6;     // seconds per point-to-point message
  double bandwidth = 25e9;    // bytes/s of a point-to-point message
  double reduceLatency = 10e-6; // seconds of a small all-reduce (2 ranks)
  double reduceBandwidth = 25e9; // bytes/s of a large all-reduce's buffer
  /// All-reduce rate between two ranks by buffer bytes, where measured
  /// (frenzy-calibrate: the shm link, MPI buffers out of cache as between
  /// a step's kernels). Small reductions are far slower than latency plus
  /// bytes over the large buffers' bandwidth (32 KiB: 30 us, not 6).
  std::vector<RatePoint> reduceRates;

  /// Seconds of an all-reduce of `bytes` per rank among `ranks` ranks
  /// (ring: each rank moves 2(n-1)/n of the buffer).
  double allReduceSeconds(double bytes, double ranks) const;
};

/// What one kernel is, for its time.
enum class KernelKind { Contraction, Attention, MemoryBound };

struct DeviceProfile {
  std::string gpuType;           // the type it was measured for
  std::string device, measured;  // free text: what and when
  std::vector<RatePoint> matmul, attention, memory; // ascending size
  double opOverhead = 0;         // seconds per kernel
  double copyBandwidth = 10e9;   // host memcpy of a sent tensor, bytes/s
  std::map<std::string, LinkProfile> links; // shm, nvlink, pcie, network
  /// Bytes/s of memory-bound kernels by plan op name, measured inside a
  /// reference step (frenzy-calibrate --plan); others use `memory`.
  std::map<std::string, std::vector<RatePoint>> kernelRates;
  bool calibrated = false;       // false: datasheet defaults
  /// CPU ranks share the machine's cores: more ranks on a node than cores
  /// run (and spin in MPI waits) in turns. 0: one device per rank (GPUs).
  int cores = 0;
  /// An all-reduce among ranks that share cores (more ranks than cores,
  /// frenzy-launch binds them round-robin and they yield while they wait):
  /// each of its rounds costs every member a turn on its core (switching
  /// processes: sharedRoundSeconds), and a core reduces its members' data
  /// one after another at sharedReduceBandwidth. Measured by
  /// frenzy-calibrate with 2x and 3x as many ranks as cores; 0: not
  /// measured (a profile of an older frenzy-calibrate, or a GPU type).
  double sharedRoundSeconds = 0, sharedReduceBandwidth = 0;
  /// Kernels slowed by the node's other CPU ranks, by ranks per core: the
  /// CPU time of a reference step with k ranks on every core (turns taken,
  /// caches shared) over one process alone (frenzy-calibrate --plan).
  std::map<int, double> contention;
  /// A rank that gets its core back after other ranks ran reads its state
  /// again (their data evicted it from the caches): the extra seconds of
  /// the reference step after `bytes` of other data, ascending (frenzy-
  /// calibrate writes 4-64 MiB), for coldStateBytes of parameters (the
  /// reference plan's, plan::updatedParameterBytes). Empty: not measured.
  std::vector<std::pair<double, double>> coldTurn;
  double coldStateBytes = 0;
  /// Seconds to wake a rank asleep in a wait on a core that idled
  /// meanwhile (a halted virtual CPU wakes slowly); 0: not measured.
  double idleWake = 0;
  /// The extra seconds of a turn after `evictedBytes` of other ranks' data,
  /// for a rank whose state is `stateBytes` (scaled from the reference);
  /// 0 where not measured.
  double coldTurnSeconds(double evictedBytes, double stateBytes) const;
  /// The slowdown of a rank's kernels when `ranks` CPU ranks share this
  /// node's cores (1 alone, or where not measured; beyond the measured
  /// ranks per core, the largest measured).
  double contentionSlowdown(int ranks) const;

  /// One member's turns on its core for an all-reduce of `bytes` among
  /// `ranks` ranks that share cores (the members on one core run one after
  /// another), from the measured round and bandwidth; < 0 when the
  /// profile has no such measurement.
  double sharedAllReduceSeconds(double bytes, int ranks) const;

  /// Seconds of one kernel doing `flops` and moving `bytes`.
  double kernelSeconds(KernelKind kind, double flops, double bytes) const;
  /// The same for a plan kernel by name (its own rate when measured).
  double kernelSeconds(const std::string &op, KernelKind kind, double flops,
                       double bytes) const;
  /// The fastest contraction rate measured (flop/s): the device's peak as
  /// reports state it.
  double peakFlops() const;
  /// The link of this kind, else "shm", else the first one, else null.
  const LinkProfile *link(const std::string &kind) const;

  /// Today's defaults for an uncalibrated type: 60% of the tensor peak
  /// for contractions, 70% of memory bandwidth, no per-kernel overhead.
  static DeviceProfile fromDatasheet(const GpuType &g);
};

/// Reads a profile file; `gpuType` is the type naming it. Errors are one
/// line: file, what is wrong, what to do.
llvm::Expected<DeviceProfile> readDeviceProfile(const std::string &path,
                                                const std::string &gpuType);

} // namespace frenzy

#endif
