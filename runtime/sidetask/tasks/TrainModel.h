//===- TrainModel.h - training steps of a small model as a side task -*- C++ -*-===//
//
// Trains the model of a one-rank plan.bin (any ONNX model frenzy-opt can
// plan, e.g. `frenzy-opt examples/gpt2-tiny.onnx --batch=1 --seq=16
// --cluster=examples/cpu-1.yaml`) on a token file with the CPU executor,
// the code path `frenzy-launch PLAN` runs. One side-task step runs at most
// `instrs` instructions of a training step (in program order, within one
// phase: forward, backward or update), so a step fits a bubble; the losses
// equal those of frenzy-launch on the same plan, data and seeds.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_TASKS_TRAINMODEL_H
#define FRENZY_RUNTIME_SIDETASK_TASKS_TRAINMODEL_H

#include "SideTask.h"

#include <memory>
#include <vector>

namespace frenzy::plan {
class Plan;
}

namespace frenzy::rt {

class Executor;
class TokenData;
struct TokenInputs;

class TrainModelTask : public SideTask {
public:
  struct Config {
    std::string plan, data;
    int64_t steps = 0;     // training steps; 0: unbounded
    uint64_t seed = 1234;  // frenzy-launch's --seed
    uint64_t initSeed = 0; // 0: the model's weights; else --init=seed
    int64_t instrs = 8;    // instructions per side-task step, at most
  };
  explicit TrainModelTask(Config c);
  ~TrainModelTask() override;
  std::string name() const override { return "train"; }
  void init(int64_t memoryBudget) override;
  bool step() override;
  void finish() override;
  int64_t bytesInUse() const override;
  std::string progress() const override;

  /// Loss of each completed training step.
  const std::vector<double> &losses() const { return lossLog; }

private:
  Config cfg;
  std::unique_ptr<plan::Plan> planMsg;
  std::unique_ptr<Executor> ex;
  std::unique_ptr<TokenData> tokens;
  std::unique_ptr<TokenInputs> inputs;
  std::vector<std::vector<int32_t>> phases;
  size_t phase = 0;
  int64_t trainStep = 1;
  std::vector<double> lossLog;
};

} // namespace frenzy::rt

#endif
