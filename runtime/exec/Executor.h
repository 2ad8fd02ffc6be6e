//===- Executor.h - run one rank's program step by step ---------*- C++ -*-===//
#ifndef FRENZY_RUNTIME_EXEC_EXECUTOR_H
#define FRENZY_RUNTIME_EXEC_EXECUTOR_H

#include "Kernel.h"

namespace frenzy::rt {

/// Owns every tensor of a program and runs its instructions in order. All
/// tensors are allocated once, at construction, and reused every step.
class Executor {
public:
  /// Validates the plan (version, tensor ids, kernels) and allocates.
  explicit Executor(const plan::Plan &plan);

  /// Loads parameter values from the model file named in the plan, checking
  /// its hash.
  void loadWeights();

  /// The tensor of a named program input or output; null when absent.
  Tensor *input(const std::string &name);
  const Tensor *output(const std::string &name) const;
  /// The tensor of a named parameter; null when absent.
  Tensor *parameter(const std::string &name);
  const plan::Program &program() const { return plan.program(); }

  /// Runs step `step` (1-based). Throws RuntimeError on a non-finite loss
  /// before any update runs, so parameters keep their previous values.
  void runStep(int64_t step, uint64_t seed);

  /// Time spent per kernel name, accumulated over steps when profiling.
  void setProfiling(bool on) { profiling = on; }
  const std::map<std::string, std::pair<double, int64_t>> &profile() const {
    return kernelTime;
  }

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
  void planLifetimes();
  const plan::Plan &plan;
  std::vector<Tensor> tensors;
  std::vector<KernelFn> kernels;
  std::map<std::string, ParamState> state;
  StepContext ctx;
  int32_t lossTensor = -1;
  std::vector<bool> persistent;         // by tensor id
  std::vector<std::vector<int32_t>> freeAfter; // by instruction
  int64_t activationPeak = 0;
  bool profiling = false;
  std::map<std::string, std::pair<double, int64_t>> kernelTime; // s, calls
};

} // namespace frenzy::rt

#endif
