//===- Metrics.h - JCT, makespan, utilisation, decision time ----*- C++ -*-===//
#ifndef FRENZY_SCHEDULER_METRICS_H
#define FRENZY_SCHEDULER_METRICS_H

#include "frenzy/Scheduler/Simulator.h"

#include "llvm/Support/raw_ostream.h"

namespace frenzy::sched {

struct Metrics {
  size_t jobs = 0;
  double avgJct = 0, p50Jct = 0, p95Jct = 0, p99Jct = 0;
  double avgQueue = 0, p95Queue = 0;
  double makespan = 0;    // last finish - first arrival
  double utilisation = 0; // GPU-seconds held / (GPUs x makespan)
  double decisionMedian = 0, decisionP99 = 0, decisionMean = 0; // seconds
  size_t decisions = 0;
  int restarts = 0;
};

/// The q-quantile (0..1) by the nearest-rank method: the smallest value
/// with at least q of the sample at or below it.
double quantile(std::vector<double> v, double q);
Metrics computeMetrics(const SimResult &r);

void printJobTable(const SimResult &r, llvm::raw_ostream &os);
void printMetrics(const Metrics &m, llvm::StringRef policy,
                  llvm::raw_ostream &os);

} // namespace frenzy::sched

#endif
