//===- Backend.h - what a rank runner needs from a device -------*- C++ -*-===//
//
// The rank runner (runtime/dist/RankRunner) and frenzy-launch's training
// loop are written against this class and runtime/comm/Comm.h only, so a
// feature written once runs on every backend: CpuBackend (the Executor's
// kernels on host memory) and cuda::CudaBackend (CudaExecutor on one GPU).
//
// Both keep the CPU Executor as the host side: it validates the plan,
// loads the weights, holds tensor shapes, the token inputs and the program
// outputs, and is what checkpoints, export and resume read and write. A
// device backend copies parameters and optimizer moments to it (toHost)
// before a checkpoint or export and back (fromHost) after a resume, so a
// checkpoint is the same bytes whichever backend wrote it.
//
// Tensor storage is by plan tensor id and lives where the backend runs
// (host or device); data() is what goes to a Comm of the same memory().
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_BACKEND_BACKEND_H
#define FRENZY_RUNTIME_BACKEND_BACKEND_H

#include "Comm.h"
#include "Executor.h"

#include <functional>
#include <string>
#include <vector>

namespace frenzy::rt {

class Backend {
public:
  virtual ~Backend() = default;
  /// "cpu" or "cuda", and where this rank runs (for messages).
  virtual const char *name() const = 0;
  virtual std::string who() const = 0;
  /// The host side (plan, shapes, weights, inputs, outputs, moments).
  virtual Executor &host() = 0;
  /// The comm for this backend's tensors: `hostComm` itself on the CPU, a
  /// device transport (NCCL) made from it on CUDA. Collective on first call.
  virtual Comm &dataComm(Comm &hostComm) = 0;

  // --- Host <-> device ---
  /// Puts the host's parameters and optimizer moments on the device (after
  /// loading or resuming); must be called once before the first step.
  virtual void fromHost() = 0;
  /// Copies parameters and optimizer moments back to the host (before a
  /// checkpoint, an export, the end of the run).
  virtual void toHost() = 0;
  /// Copies the host's current inputs (token ids, targets) to the device.
  virtual void uploadInputs() = 0;

  // --- Tensors by plan id ---
  /// Storage of tensor `id` (allocated when absent) and its bytes there
  /// (mixed precision may store an activation in 2-byte floats).
  virtual void *data(int32_t id) = 0;
  virtual int64_t bytes(int32_t id) = 0;
  /// Whether this rank holds storage for `id` now (made here, received).
  virtual bool has(int32_t id) = 0;
  virtual void allocate(int32_t id) = 0;
  virtual void release(int32_t id) = 0;
  /// Makes micro-batch `mb`'s activations current (1F1B keeps several).
  virtual void switchMicroBatch(int64_t mb) = 0;

  // --- Running ---
  virtual void beginStep(int64_t step, uint64_t seed) = 0;
  /// Runs plan instructions (program indices) in order.
  virtual void run(const std::vector<int32_t> &instrs) = 0;
  /// The whole program as one step (plain one-rank plans).
  virtual void runProgramStep(int64_t step, uint64_t seed) = 0;
  /// End of a step: outputs to the host, the device drained and checked.
  virtual void endStep(int64_t step) = 0;
  /// The loss tensor's value now (a device backend waits for it and
  /// throws when it is not finite).
  virtual double loss(int64_t step) = 0;
  /// Writes a one-element f32 tensor (allocated when absent): the clip
  /// instruction's norm and factor, computed from the step's all-reduce.
  virtual void setScalar(int32_t id, float value) = 0;
  /// The sum over the rank's TP group that tp_all_reduce calls.
  virtual void setTpAllReduce(std::function<void(float *, int64_t)> f) = 0;
  /// Called between kernels (StepContext::betweenKernels). A device
  /// backend's kernels run asynchronously to the host and its transport
  /// (NCCL) progresses on its own: the default ignores it.
  virtual void setBetweenKernels(std::function<void()>) {}
  /// The all-gather and reduce-scatter over the rank's TP group that the
  /// sequence-parallel ops call (StepContext::Chunks: n floats a rank).
  virtual void setTpChunks(StepContext::Chunks allGather,
                           StepContext::Chunks reduceScatter) = 0;

  // --- Gradient accumulators (one set per rank, not per micro-batch) ---
  /// The first micro-batch's gradient becomes its accumulator.
  virtual void keepGradient(int32_t g) = 0;
  /// A later micro-batch's gradient is added to it and freed.
  virtual void addGradient(int32_t g) = 0;
  /// The accumulator, times `factor`, goes back into the gradient tensor
  /// the update reads (in place where the backend can).
  virtual void restoreGradient(int32_t g, float factor) = 0;
  /// Contiguous buffer `slot` of at least `n` floats, kept between steps
  /// (where a DP group's pieces are summed).
  virtual float *pieceBuffer(size_t slot, int64_t n) = 0;
  /// Copies piece `pc` of gradient `g`'s accumulator to `buf`, or back.
  virtual void copyPiece(const plan::Piece &pc, int32_t g, float *buf,
                         bool intoAccumulator) = 0;
  /// Sum of squares of the f32 tensors `ids` (this rank's share of the
  /// global gradient norm).
  virtual double sumOfSquares(const std::vector<int32_t> &ids) = 0;

  // --- Memory ---
  /// This rank's high-water mark so far (the step line's "used").
  virtual int64_t peakBytes() = 0;
  /// The plan's prediction for `r` as this backend counts memory (the CPU
  /// has no CUDA context and no cuBLASLt workspace).
  virtual int64_t comparablePrediction(const plan::Rank &r) const = 0;
  /// The end-of-run memory line, after "memory: ".
  virtual std::string memorySummary(int64_t predicted) = 0;
  /// Extra words for a step line (fp16 overflow), "" when none.
  virtual std::string stepNote() { return ""; }
  /// A one-rank step line's memory part (" | ..."; "" on the CPU, whose
  /// one-rank lines have none): this step's high-water mark.
  virtual std::string stepMemory(int64_t predicted) { return ""; }

  // --- Timers for traces ---
  /// With a non-null array of plan::kNumOpClasses seconds, each
  /// instruction's time is added to its op class's: the CPU's steady
  /// clock, CUDA events on the GPU.
  virtual void setClassTimes(double *seconds) = 0;
};

} // namespace frenzy::rt

#endif
