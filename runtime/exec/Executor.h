//===- Executor.h - run one rank's program step by step ---------*- C++ -*-===//
#ifndef FRENZY_RUNTIME_EXEC_EXECUTOR_H
#define FRENZY_RUNTIME_EXEC_EXECUTOR_H

#include "Kernel.h"

#include <optional>
#include <set>
#include <unordered_map>

namespace frenzy::rt {

/// The full shape of a tensor-parallel parameter's local share, and the
/// copy of rank `tpRank`'s share out of the full value (or, intoFull, back
/// into it); see ParamSource.shard.
Tensor unsharded(const plan::ParamSource &p, const Tensor &local);
void copyShard(const plan::ParamSource &p, Tensor &full, Tensor &local,
               int64_t tpRank, bool intoFull = false);
/// Copies slice `index` of `count` of `full` (cut along `dim`, separately
/// in each of `blocks` equal blocks of that dim) out to the contiguous
/// `part`, or back into `full`.
void copySlice(const std::vector<int64_t> &fullShape, int elemBytes,
               int64_t dim, int64_t blocks, int64_t index, int64_t count,
               uint8_t *full, uint8_t *part, bool intoFull);
/// The same slice as one strided copy (what a device backend hands
/// cudaMemcpy2D, and what copySlice loops over): `rows` rows of `width`
/// bytes, packed in `part`, `fullPitch` apart in `full` from byte
/// `fullOffset` on. Throws when the dim does not split evenly.
struct SliceCopy {
  size_t rows = 0, width = 0, fullPitch = 0, fullOffset = 0;
};
SliceCopy sliceCopy(const std::vector<int64_t> &fullShape, int elemBytes,
                    int64_t dim, int64_t blocks, int64_t index, int64_t count);

/// Owns the tensors of a program (or of the instructions of one rank) and
/// runs instructions. Parameters, inputs, constants and outputs are
/// allocated once; activations when produced (or received) and freed after
/// their last reader. A rank running several micro-batches keeps one set of
/// activations per micro-batch in flight (switchMicroBatch).
class Executor {
public:
  /// Validates the plan (version, tensor ids, kernels) and allocates what
  /// `instrs` (program indices in run order; empty: the whole program)
  /// touch. Activations in `freeLate` are not freed after their last reader
  /// but by release() (a rank frees a tensor it sends after sending it).
  /// `program` picks the plan's program (see plan/PlanPrograms.h).
  explicit Executor(const plan::Plan &plan, std::vector<int32_t> instrs = {},
                    std::set<int32_t> freeLate = {}, int32_t program = 0);

  /// Loads parameter values from the model file named in the plan, checking
  /// its hash; with `initSeed`, matrices are drawn from it instead
  /// (SeededInit.h), the same values on any partition.
  void loadWeights(std::optional<uint64_t> initSeed = std::nullopt);

  /// The tensor of a named program input or output; null when absent.
  Tensor *input(const std::string &name);
  const Tensor *output(const std::string &name) const;
  /// The tensor of a named parameter; null when absent.
  Tensor *parameter(const std::string &name);
  const plan::Program &program() const { return prog; }

  /// Runs step `step` (1-based). Throws RuntimeError on a non-finite loss
  /// before any update runs, so parameters keep their previous values.
  void runStep(int64_t step, uint64_t seed);
  /// The parts of a step, for a rank running its phases: set the step's
  /// context, then run lists of instructions (program indices).
  void beginStep(int64_t step, uint64_t seed);
  void run(const std::vector<int32_t> &instrs);
  StepContext &context() { return ctx; }
  /// Optimizer moments by parameter name (what a checkpoint saves).
  std::map<std::string, ParamState> &optimizerState() { return state; }
  int32_t lossTensorId() const { return lossTensor; }

  /// Tensors by id. allocate() gives an activation storage (a received
  /// tensor); release() frees it.
  Tensor &tensor(int32_t id) { return tensors[id]; }
  void allocate(int32_t id);
  void release(int32_t id);
  bool isPersistent(int32_t id) const { return persistent[id]; }
  /// Moves an activation's storage out to `out` (a gradient accumulator
  /// kept across micro-batches) and back in with restore(), which needs
  /// the tensor unallocated. It stays counted as live memory meanwhile.
  void detach(int32_t id, std::vector<uint64_t> &out);
  void restore(int32_t id, std::vector<uint64_t> &in);
  /// Makes the activations of micro-batch `mb` current, putting away the
  /// current ones.
  void switchMicroBatch(int64_t mb);

  /// Time spent per kernel name, accumulated over steps when profiling.
  void setProfiling(bool on) { profiling = on; }
  const std::map<std::string, std::pair<double, int64_t>> &profile() const {
    return kernelTime;
  }
  /// With a non-null array of plan::kNumOpClasses seconds, each kernel's
  /// time is added to its op class's (plan/TraceFormat.h): a traced run's
  /// breakdown. Null (the default) costs one branch per instruction.
  void setClassTimes(double *seconds) { classTimes = seconds; }

  /// Learning rate of a step under the plan's schedule.
  double learningRate(int64_t step) const;
  /// Memory accounting of the tensor allocator (bytes). Persistent:
  /// parameters, inputs, constants, program outputs, optimizer state.
  /// Activations are allocated when produced and freed after their last
  /// reader; the high-water mark adds the running kernel's workspace.
  int64_t persistentBytes() const;
  int64_t activationPeakBytes() const { return activationPeak; }
  /// Persistent bytes plus the activation high-water mark of all steps run.
  int64_t peakBytes() const { return persistentBytes() + activationPeak; }
  int64_t parameterCount() const;

private:
  void planLifetimes(const std::set<int32_t> &freeLate);
  /// Activation storage comes from and goes back to `spare` (buffers by
  /// size in 8-byte words): every step allocates the same sizes in the same
  /// order, so after the first step no allocation reaches malloc or faults
  /// in fresh pages. A reused buffer keeps its old contents (zeroing them
  /// cost 9% of a step): every kernel must write all of its outputs. With
  /// FRENZY_POISON_REUSED=1 reused buffers are filled with NaN instead, so
  /// a kernel that reads its output before writing it shows (a test runs
  /// that way).
  void obtain(Tensor &t);
  void recycle(Tensor &t);
  std::unordered_map<size_t, std::vector<std::vector<uint64_t>>> spare;
  bool poisonReused = false;
  const plan::Plan &plan;
  const plan::Program &prog;
  std::vector<int32_t> order;              // instructions, in run order
  std::vector<int32_t> activations;        // activation ids this rank uses
  int64_t currentMicroBatch = 0;
  std::map<int64_t, std::vector<std::vector<uint64_t>>> stashed; // by mb
  int64_t live = 0;
  std::vector<Tensor> tensors;
  std::vector<KernelFn> kernels;
  std::map<std::string, ParamState> state;
  StepContext ctx;
  int32_t lossTensor = -1;
  std::vector<bool> persistent;         // by tensor id
  std::vector<std::vector<int32_t>> freeAfter; // by program instruction
  int64_t activationPeak = 0;
  bool profiling = false;
  double *classTimes = nullptr;
  std::vector<uint8_t> opClass; // by program instruction, for classTimes
  std::map<std::string, std::pair<double, int64_t>> kernelTime; // s, calls
};

} // namespace frenzy::rt

#endif
