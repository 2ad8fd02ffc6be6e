//===- KernelBench.h - time the runtime's kernels ---------------*- C++ -*-===//
//
// Each measurement is a small synthetic plan program run by the runtime's
// own Executor (the dispatch a training step pays, not a bare BLAS call):
// a kernel repeated on the same inputs, timed over several rounds, the
// median kept. Flops and bytes are counted as the predicted timeline counts
// them (plan/KernelCost.h), so the rates apply to it directly.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_CALIBRATE_KERNELBENCH_H
#define FRENZY_TOOLS_CALIBRATE_KERNELBENCH_H

#include <string>
#include <vector>

namespace frenzy::calibrate {

struct Point {
  double size = 0, rate = 0; // flops or bytes per call; per second
  std::string what;          // the shape, for the profile's comments
};

struct KernelProfile {
  std::vector<Point> matmul, attention, memory;
  double opOverheadSeconds = 0;
  double copyBytesPerSecond = 0; // filled by the link measurement
  /// Bytes per second of each memory-bound kernel by plan op name, as
  /// measured inside a reference step (measurePlan); empty without one.
  std::vector<std::pair<std::string, Point>> opRates;
  std::string reference; // the reference plans, when measured
};

/// `quick`: fewer rounds and sizes (a test, not a profile).
KernelProfile measureKernels(bool quick);

/// Times every instruction of a one-rank plan's step (mean over `steps`
/// steps after one warm-up) and replaces the contraction and attention
/// tables with the rates of its calls (in the caches and layouts of a real
/// step, not of a loop over one kernel), and adds to opRates. Several
/// plans (micro-batch sizes) give several sizes per kernel.
void measurePlan(const std::string &planPath, int steps, KernelProfile &p);

} // namespace frenzy::calibrate

#endif
