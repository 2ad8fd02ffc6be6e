//===- CudaExecutor.h - run a program's instructions on one GPU -*- C++ -*-===//
//
// The GPU engine under cuda::CudaBackend (runtime/backend/Backend.h). The CPU
// Executor stays the host side: it validates the plan, loads the weights
// and holds the inputs and outputs; this class mirrors its persistent
// tensors on the device, runs every instruction there (CudaOps.h) on the
// compute stream, frees each activation after its last reader through the
// caching allocator, and copies the outputs back after each step.
//
// Precision (Plan.precision) as host/PrecisionPlan decides it: fp32 runs
// everything in f32; bf16-mixed and fp16-mixed store activations in
// bf16/fp16 and run matmuls, attention, norms and elementwise ops in that
// type with f32 accumulation; parameters (the master weights), their
// gradients, optimizer moments and losses stay f32 (castFloat between
// them). fp16-mixed scales the loss gradient by a dynamic loss scale, unscales the parameter
// gradients before the update and skips the update of a step whose
// gradients overflowed (PyTorch GradScaler's rule).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDAEXECUTOR_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDAEXECUTOR_H

#include "CudaOps.h"
#include "DeviceContext.h"
#include "Executor.h"
#include "PrecisionPlan.h"

#include <functional>
#include <map>
#include <set>
#include <vector>

namespace frenzy::rt::cuda {

class CudaExecutor {
public:
  /// `host` has loaded its weights. `order` (program indices; empty: the
  /// whole program) is what this rank runs: activations die after their
  /// last reader among them, except those in `freeLate` (released by the
  /// caller, after sending them). Throws for an op without a CUDA adapter.
  CudaExecutor(const plan::Plan &plan, Executor &host, DeviceContext &ctx,
               std::vector<int32_t> order = {},
               std::set<int32_t> freeLate = {});
  ~CudaExecutor();

  /// Copies the host's current inputs (token ids, targets) to the device.
  void uploadInputs();
  /// Runs step `step`, then copies the program outputs back into the host
  /// executor's tensors. Throws on a non-finite loss (before the update),
  /// a bad token id or label (naming the instruction), a device error.
  void runStep(int64_t step, uint64_t seed);
  /// Copies the parameters back into the host executor (for export).
  void downloadParameters();

  /// Optimizer moments to and from the host executor's state (by
  /// parameter name, as checkpoints hold them).
  void downloadMoments();
  void uploadMoments();

  // The parts of a step, for a rank of a plan's stage (CudaBackend).
  void beginStep(int64_t step, uint64_t seed);
  /// Runs instructions (program indices) on the compute stream.
  void run(const std::vector<int32_t> &instrs);
  /// The loss on the host (synchronises); throws when it is not finite.
  float checkedLoss(int64_t step);
  /// Copies the outputs back, waits for the GPU, checks the index slots.
  void finishStep(int64_t step);
  /// The device buffer of a tensor (allocated when absent) and its bytes.
  void *deviceTensor(int32_t id);
  int64_t deviceBytes(int32_t id);
  void release(int32_t id);
  bool holds(int32_t id) const { return dev[size_t(id)].ptr != nullptr; }
  bool isPersistent(int32_t id) const { return persistent[size_t(id)]; }
  /// Takes an activation's storage out (a gradient accumulator kept across
  /// micro-batches; still allocated) and puts it back (the tensor must be
  /// unallocated then).
  void *detach(int32_t id);
  void restore(int32_t id, void *storage);
  /// Makes micro-batch `mb`'s activations current (several micro-batches
  /// are in flight on a pipeline stage under 1F1B).
  void switchMicroBatch(int64_t mb);
  /// The sum over the rank's TP group for tp_all_reduce (none: identity).
  std::function<void(float *, int64_t)> tpAllReduce;
  /// Sequence parallelism's collectives over the same group (none: a
  /// group of one).
  StepContext::Chunks tpAllGather, tpReduceScatter;
  const std::vector<int32_t> &gradients() const { return updateGrads; }

  /// Whether the last fp16 step skipped its update (overflow), and the
  /// loss scale now.
  bool skippedUpdate() const { return skipped; }
  /// fp16-mixed: unscales the update's gradients (once a step; before the
  /// first update instruction at the latest). A rank runner calls it before
  /// the gradient norm, which must see unscaled gradients.
  void unscaleOnce();
  float lossScale() const { return scaleHost; }

private:
  struct DevTensor {
    void *ptr = nullptr;
    int64_t bytes = 0;
  };
  void planLifetimes(const std::set<int32_t> &freeLate);
  k::FloatType storage(int32_t id) const {
    return k::FloatType(int(pp.storage[size_t(id)]));
  }
  k::FloatType need(int instr, int index, bool out) const {
    return k::FloatType(int(pp.need(instr, index, out)));
  }
  void *allocate(int32_t id);
  void runInstr(int pos);
  void upload(int32_t id);
  void download(int32_t id);
  void unscaleGradients();
  void checkBadIndices();

  const plan::Plan &plan;
  Executor &host;
  DeviceContext &ctx;
  const plan::Program &prog;
  PrecisionPlan pp;
  bool fp16Scaling = false;
  std::vector<DevTensor> dev;             // by tensor id
  std::vector<bool> persistent;           // by tensor id
  std::vector<CudaOp> ops;                // by instruction
  std::vector<OpId> opIds;                // by instruction
  std::vector<int32_t> order;             // instructions this rank runs
  int64_t currentMicroBatch = 0;
  std::map<int64_t, std::vector<void *>> stashed; // activations by mb
  std::vector<std::vector<int32_t>> freeAfter; // by instruction
  std::vector<int32_t> updateGrads;       // gradients the update reads
  int firstUpdate = -1;                   // first optimizer instruction
  int lossInstr = -1;
  std::map<std::string, std::vector<void *>> momentBufs; // by param name
  std::map<std::string, int64_t> momentCount;            // floats in each
  int64_t *badIndices = nullptr;          // one int64 per instruction
  float *scaleDev = nullptr;              // fp16: loss scale, dloss copy
  int *goodSteps = nullptr, *foundInf = nullptr;
  float scaleHost = 1.0f;
  bool skipped = false;
  bool unscaled = false; // this step's gradients are unscaled
};

} // namespace frenzy::rt::cuda

#endif
