//===- RankRunner.h - one rank of a multi-rank plan -------------*- C++ -*-===//
//
// Runs this process's rank of the plan: its stage's instructions on a
// Backend (CPU or CUDA), talking through Comms only, driven by the rank's instruction stream (forward and backward
// per micro-batch with their receives and sends, gradient reduction over
// the DP groups, the update, tied-parameter sync). The result of a step is
// the loss and gradient norm of the whole global batch, equal (up to float
// summation order) to a one-rank run of the same plan's model and batch.
// One runner for every backend: the data comm (the backend's, NCCL on
// CUDA) carries tensors; the host comm carries the step's scalars (loss,
// norm, every rank's peak memory). On the CPU both are one MpiComm.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_DIST_RANKRUNNER_H
#define FRENZY_RUNTIME_DIST_RANKRUNNER_H

#include "backend/Backend.h"
#include "Comm.h"
#include "SideTaskHost.h"
#include "SpeedEmulation.h"
#include "TokenInputs.h"
#include "Trace.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>

namespace frenzy::rt {

/// Where a rank's step went (steady-clock seconds; measured when side
/// tasks, speed emulation or wait measurement are on).
struct StepTimes {
  double step = 0;       // the whole step
  double compute = 0;    // forward and backward, emulation included
  double computeCpu = 0; // their CPU time
  double forwardCpu = 0; // the forwards' part of it
  double emulated = 0;   // slept to emulate a slower device
  double recvWait = 0;   // from a receive's start to its message's arrival
  double collective = 0; // gradient reduction and the update's all-reduce
};

struct StepResult {
  double loss = 0, gradNorm = 0;
  /// Every rank's peak bytes (Backend::peakBytes), carried by the update's all-reduce
  /// (so a step needs no collective of its own to report memory).
  std::vector<int64_t> peakBytes;
};

class RankRunner {
public:
  /// Makes this rank's backend from what it runs: the instructions in run
  /// order, the activations freed by the runner (after sending them), the
  /// stage's program.
  using MakeBackend = std::function<std::unique_ptr<Backend>(
      std::vector<int32_t> order, std::set<int32_t> freeLate,
      int32_t program)>;
  /// Validates that the plan's stages, ranks and streams are consistent
  /// with a world of hostComm.size() processes, and builds this rank's
  /// backend and communicators (collective).
  RankRunner(const plan::Plan &plan, Comm &hostComm, const MakeBackend &make);
  /// Throws when this runtime cannot run the plan (checked before any rank
  /// starts).
  static void checkSupported(const plan::Plan &plan);

  Backend &backend() { return *be; }
  Executor &executor() { return be->host(); }
  Comm &dataComm() { return *comm; }
  const plan::Rank &rank() const { return me; }
  const plan::StageProgram &stage() const { return *st; }

  /// This rank's parameters (its shards), from the model or a seed, on
  /// the host; Backend::fromHost puts them (and a resume's) on the device.
  void loadWeights(std::optional<uint64_t> initSeed) {
    be->host().loadWeights(initSeed);
  }
  void setData(const TokenData *tokens);
  StepResult runStep(int64_t step, uint64_t seed);
  /// Records every action of the following steps in `t` (null: off). A
  /// traced run also separates waiting from transferring: a receive probes
  /// first, a reduction passes a barrier first (both as "wait" slices).
  void setTrace(Trace *t);
  /// Side tasks run in front of receives whose message has not arrived
  /// (null: none). The limit of such a gap is the wait measured at the
  /// same place of the previous step, so the first step runs none.
  /// With plan slots (Action SIDE_TASK), side tasks run only in them:
  /// `taskOfPlanTask` maps the plan's side-task index to the host's (-1:
  /// unbound, the slot stays idle); a slot runs until the following
  /// receive's message arrives or for its predicted duration times the
  /// slot scale, whichever comes first.
  void setSideTasks(SideTaskHost *host, std::vector<int> taskOfPlanTask = {}) {
    side = host;
    hostTask = std::move(taskOfPlanTask);
  }
  /// Seconds on this machine per predicted second for plan slots (the
  /// emulation's scale); 0: the previous step's measured / predicted.
  void setSlotScale(double s) { slotScale = s; }
  /// Forward and backward take `factor` x their CPU time (SpeedEmulation.h).
  void setSpeedFactor(double factor) { speedFactor = factor; }
  /// Forward and backward take fixed durations instead (seconds per
  /// micro-batch; SpeedEmulation.h's plan emulation).
  void setComputeDurations(double forward, double backward) {
    forwardSeconds = forward;
    backwardSeconds = backward;
  }
  /// Every action the plan predicts a duration for (Action.
  /// predicted_seconds) takes that x `scale` (0: off): forwards and
  /// backwards, sends (before posting: the message leaves at the predicted
  /// end), receives (once the message is there), the reductions and the
  /// optimizer (once the collective is done), the tied-parameter sync.
  void setTimelineScale(double scale) { actionClock.scale = scale; }
  /// Measures StepTimes (on with side tasks or emulation).
  void setMeasureTimes(bool on) { measure = on; }
  const StepTimes &stepTimes() const { return times; }

private:
  void forwardOrBackward(const plan::Action &a);
  void reduceGradients();
  /// Runs `reduce(arrived)`; traced (or `waitFirst`), the wait for the
  /// other members first: two slices, and when the wait ended.
  struct Reduced {
    bool waitFirst = false;
    double waitEnd = 0, waited = 0; // steadySeconds(); seconds
  };
  template <class F>
  Reduced tracedAllReduce(const char *what, bool waitFirst, F reduce);
  void checkPieces(const plan::CommGroup &g) const;
  StepResult update(const plan::Action &a);
  void syncParams(const plan::Action &a);
  void beginMicroBatch(int64_t mb);

  const plan::Plan &plan;
  Comm &hostComm;
  plan::Rank me;
  const plan::StageProgram *st = nullptr;
  std::unique_ptr<Backend> be;
  Comm *comm = nullptr; // the data comm (the backend's)
  std::vector<int32_t> forward, backward, updates;
  std::vector<int32_t> grads;                     // accumulated per step
  /// Gradients with an accumulator this step (Backend::keepGradient):
  /// one set per step, not one per micro-batch (each micro-batch's
  /// gradients are freed once added).
  std::set<int32_t> accumulated;
  /// The backward cut after each instruction that last touches a gradient,
  /// with the gradients done there: each is added to its accumulator and
  /// freed at once, so at most the few one instruction makes exist beside
  /// the accumulators, as a GPU kernel's in-place accumulation would.
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>
      backwardParts;
  void accumulate(int32_t g);
  std::vector<std::pair<const plan::CommGroup *, Group>> dpGroups;
  std::vector<std::pair<const plan::CommGroup *, Group>> tiedGroups;
  std::set<int32_t> freeLate;                     // released after sending
  std::vector<int32_t> toRelease;
  /// Full recomputation (StageProgram.recompute_forward): what the forward
  /// makes for the backward is dropped after it and made again by running
  /// the forward before the backward; received inputs are kept until the
  /// backward has run.
  bool recomputeForward = false;
  std::vector<int32_t> dropAfterForward, keptInputs, rerunSent;
  const TokenData *data = nullptr;
  std::optional<TokenInputs> inputs;
  double lossSum = 0;
  int64_t microBatchesRun = 0;
  Trace *trace = nullptr;
  SideTaskHost *side = nullptr;
  double speedFactor = 1;
  double forwardSeconds = 0, backwardSeconds = 0;
  ActionClock actionClock; // plan emulation of every action; its debt is shared
  /// REDUCE_GRADS under emulation: its window's start (after the wait for
  /// sends), the DP barriers' waits inside it, the start in trace time.
  double reduceStart = 0, reduceWaited = 0, reduceTraced = 0;
  bool measure = false;
  StepTimes times;
  std::vector<int> hostTask;    // plan side task -> host task
  double slotScale = 0, lastStep = 0;
  bool planSlots = false;       // the plan has side-task slots
  void runPlanSlot(int pos);
  std::vector<double> gapLimit; // by stream position: last step's wait
};

} // namespace frenzy::rt

#endif
