//===- TrainModel.cpp - training steps of a small model as a side task ----===//
#include "TrainModel.h"

#include "Executor.h"
#include "PlanLoader.h"
#include "TokenData.h"
#include "TokenInputs.h"
#include "plan/TraceFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace frenzy::rt {

TrainModelTask::TrainModelTask(Config c) : cfg(std::move(c)) {}
TrainModelTask::~TrainModelTask() = default;

void TrainModelTask::init(int64_t memoryBudget) {
  if (cfg.plan.empty() || cfg.data.empty())
    throw std::invalid_argument("train: give plan=PLAN.bin (a one-rank plan) "
                                "and data=TOKENS.bin");
  planMsg = std::make_unique<plan::Plan>(loadPlanFile(cfg.plan));
  if (planMsg->ranks_size() > 1)
    throw std::invalid_argument("train: " + cfg.plan + " has " +
                                std::to_string(planMsg->ranks_size()) +
                                " ranks; a side task trains a one-rank plan "
                                "(frenzy-opt --cluster=examples/cpu-1.yaml)");
  ex = std::make_unique<Executor>(*planMsg);
  if (cfg.initSeed)
    ex->loadWeights(cfg.initSeed);
  else
    ex->loadWeights();
  tokens = std::make_unique<TokenData>(cfg.data);
  inputs = std::make_unique<TokenInputs>(TokenInputs::bind(*ex));
  tokens->requireBatch(inputs->rows(), inputs->seq());
  // Pieces of at most cfg.instrs instructions of each phase, in order:
  // the executor runs any prefix of the order, so a step can be that short.
  for (const plan::Phase &ph : plan::oneRankPhases(ex->program()))
    for (size_t i = 0; i < ph.instrs.size(); i += size_t(cfg.instrs))
      phases.emplace_back(ph.instrs.begin() + long(i),
                          ph.instrs.begin() +
                              long(std::min(ph.instrs.size(),
                                            i + size_t(cfg.instrs))));
  if (phases.empty())
    throw std::invalid_argument("train: " + cfg.plan + " has no instructions");
  // The persistent part (weights, optimizer state) is known now; the
  // activations only after a step: the budget is checked after each one.
  if (memoryBudget > 0 && ex->persistentBytes() > memoryBudget)
    throw std::runtime_error("train: the model's parameters and optimizer "
                             "state need " +
                             std::to_string(ex->persistentBytes()) +
                             " bytes, over the budget of " +
                             std::to_string(memoryBudget));
}

bool TrainModelTask::step() {
  if (cfg.steps > 0 && trainStep > cfg.steps)
    return false;
  if (phase == 0) {
    inputs->fill(*tokens, trainStep, inputs->rows(), 0);
    ex->beginStep(trainStep, cfg.seed);
  }
  ex->run(phases[phase]);
  if (++phase < phases.size())
    return true;
  phase = 0;
  const Tensor *loss = ex->output("loss");
  double l = loss ? double(loss->f32()[0]) : NAN;
  if (!std::isfinite(l))
    throw std::runtime_error("train: the loss of step " +
                             std::to_string(trainStep) + " is " +
                             std::to_string(l));
  lossLog.push_back(l);
  ++trainStep;
  return cfg.steps <= 0 || trainStep <= cfg.steps;
}

void TrainModelTask::finish() {
  inputs.reset();
  ex.reset();
  tokens.reset();
}

int64_t TrainModelTask::bytesInUse() const {
  return ex ? ex->peakBytes() : 0;
}

std::string TrainModelTask::progress() const {
  char buf[96];
  if (lossLog.empty())
    return "no training step completed";
  std::snprintf(buf, sizeof(buf), "%zu training steps, loss %.6f",
                lossLog.size(), lossLog.back());
  return buf;
}

} // namespace frenzy::rt
