//===- NetworkBench.h - links between nodes, measured by one rank per node -*- C++ -*-===//
//
// frenzy-calibrate --cluster=C.yaml starts one rank on every node of the
// cluster file (through frenzy-launch's host launcher, LinkCalibration.cpp)
// and each rank runs measureNetworkRank: a ping-pong between every node
// pair, one pair at a time (the others wait, so no link carries two pairs'
// traffic), and MPI_Allreduce of floats across all nodes (and across each
// pair when there are more than two), at message sizes like a plan's stage
// transfers and gradients. The time of each size is kept (the cost model
// interpolates between them: over TCP and a shaped link, time is not
// latency + bytes / bandwidth), with the smallest's as the latency and the
// rate over the largest sizes as the bandwidth (for the all-reduce, bus
// bandwidth: 2(P-1)/P x bytes / time). Rank 0 prints the results as lines that the
// launcher reads back from mpirun's output (it has no shared file system
// with the nodes to assume).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_CALIBRATE_NETWORKBENCH_H
#define FRENZY_TOOLS_CALIBRATE_NETWORKBENCH_H

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::calibrate {

/// The prefix of rank 0's result lines on stdout.
constexpr const char *kNetworkLine = "frenzy-calibrate-network:";

struct NetworkSettings {
  std::vector<int64_t> sizes; // message bytes (ping-pong and all-reduce)
  int rounds = 10;            // timed rounds per size (median), >= 1
};

/// One measured figure: the seconds of each size (bytes, median seconds),
/// the smallest's time as the latency and the rate over the largest sizes
/// (least squares over those of at least a quarter of the largest, two at
/// least) as the bandwidth (what lies beyond the largest size measured).
struct Fit {
  double latency = 0, bandwidth = 0; // s, bytes/s
  std::vector<std::pair<double, double>> points;
};

/// The figure of `points`; `factor` the bytes on the wire per byte of
/// message (2(P-1)/P for an all-reduce's bus bandwidth).
Fit fitLine(std::vector<std::pair<double, double>> points, double factor);

/// Under mpirun, rank r on node r: measures and (rank 0) prints
/// "kNetworkLine pair I J BYTES SECONDS ..." and "kNetworkLine allreduce
/// I,J,.. BYTES SECONDS ..." lines. Returns the exit code.
int measureNetworkRank(const NetworkSettings &s);

/// One-way seconds of `bytes` between world ranks a and b: half the median
/// of `rounds` timed round trips, one untimed round first. Only a and b call
/// it (also frenzy-calibrate's two-rank link measurement on one machine).
double pingPongSeconds(int me, int a, int b, int64_t bytes, int rounds);

/// "8,64K,1M" -> bytes; throws one line for a bad list.
std::vector<int64_t> parseSizes(const std::string &list);

} // namespace frenzy::calibrate

#endif
