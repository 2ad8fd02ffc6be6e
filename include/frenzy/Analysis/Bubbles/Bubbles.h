//===- Bubbles.h - idle intervals of a pipeline schedule --------*- C++ -*-===//
//
// The bubble analysis: plays one training step of a partitioned, scheduled
// plan with the partition's cost model (each stage's forward and backward
// of one micro-batch, the gradient reduction, the optimizer) and lists
// every interval in which a stage's GPUs compute nothing, with the memory
// free at that moment (the device's capacity minus the memory analysis'
// live bytes: the stage's static memory and the activations of the
// micro-batches it holds). Waits of a fast stage on a slow one, the
// warm-up and drain of the pipeline and the wait of every stage for the
// slowest one before the gradient reduction are all bubbles; the reduction
// and the optimizer are work. MLIR-free: the passes fill the problem from
// the IR, tests and the runtime may fill it by hand.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_ANALYSIS_BUBBLES_BUBBLES_H
#define FRENZY_ANALYSIS_BUBBLES_BUBBLES_H

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::bubbles {

/// One compute phase of a stage: a micro-batch's forward or backward.
struct Phase {
  bool backward = false;
  int32_t microBatch = 0;
  std::string name() const;
};

/// A stage as the analysis sees it (all its TP ranks run the same
/// timeline).
struct Stage {
  std::string gpu;
  int64_t ranks = 1;                // its TP degree
  double forward = 0, backward = 0; // seconds of one micro-batch
  /// Seconds one micro-batch's boundary tensor takes to the next stage
  /// (activations after a forward, the same size of gradients back after
  /// the next stage's backward): the sender is busy that long after its
  /// phase and the receiver as long before its own, which starts no
  /// earlier than the send ends. 0 (and for the last stage): no transfer.
  double sendSeconds = 0;
  /// Tensors this stage sends after each backward to a stage that reads
  /// them before its own backward of the same micro-batch, beside the
  /// neighbour's gradient: a tied parameter's gradient from the stage that
  /// also uses it (the head) to the one that owns it (the embedding).
  /// Both ends are busy `seconds`, as for sendSeconds.
  struct BackwardSend {
    int64_t to = 0; // a stage index of the same pipeline
    double seconds = 0;
  };
  std::vector<BackwardSend> backwardSends;
  int64_t capacityBytes = 0;        // one GPU's memory
  int64_t peakBytes = 0;            // with peakInFlight micro-batches held
  int64_t peakInFlight = 1;
  int64_t activationBytes = 0; // what each micro-batch held adds
  std::vector<Phase> order;    // the schedule
  /// Live bytes with `inFlight` micro-batches held.
  int64_t liveBytes(int64_t inFlight) const;
};

struct ScheduleProblem {
  std::string kind = "1f1b";
  std::vector<std::vector<Stage>> pipelines;
  double allReduceSeconds = 0, optimizerSeconds = 0;
  /// Every order runs each micro-batch forward then backward once, and
  /// pipelines agree in micro-batch count per stage; the error names it.
  llvm::Error check() const;
};

/// A busy interval of a stage.
struct Busy {
  double start = 0, end = 0;
  std::string what; // "F3", "B0", "recv F3", "send B0", "dp all-reduce",
                    // "optimizer"
};

/// An idle interval of a stage in one step.
struct Bubble {
  int pipeline = 0, stage = 0;
  double start = 0, seconds = 0;
  int64_t inFlight = 0;  // micro-batches whose activations are held
  int64_t freeBytes = 0; // per GPU of the stage
  std::string before;    // the work that ends it: "F3", "B0", "reduce"
  std::string cause;     // what it waits for
};

struct StageTimeline {
  int pipeline = 0, stage = 0;
  std::vector<Busy> busy;
  double idleSeconds = 0;
};

struct BubbleAnalysis {
  double stepSeconds = 0;
  std::vector<StageTimeline> stages; // pipeline-major
  std::vector<Bubble> bubbles;       // by stage, then time
  /// Idle share of the stages' time (every stage weighted equally), and
  /// of GPU time (stages weighted by their TP degree).
  double fraction = 0;
  double idleGpuSeconds = 0, gpuSeconds = 0;
};

/// Plays the step. Errors: a problem check() refuses, or orders that
/// deadlock (a stage waits for a phase its neighbour never reaches).
llvm::Expected<BubbleAnalysis> analyze(const ScheduleProblem &problem);

/// The text `--emit=bubbles` and -frenzy-print-bubbles print: every bubble,
/// then per stage and in total.
void print(const ScheduleProblem &problem, const BubbleAnalysis &a,
           llvm::raw_ostream &os);
/// The per-stage and total lines only (--emit=report).
void printSummary(const ScheduleProblem &problem, const BubbleAnalysis &a,
                  llvm::raw_ostream &os);

} // namespace frenzy::bubbles

#endif
