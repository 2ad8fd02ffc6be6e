//===- TraceModels.cpp - the model sizes trace jobs are mapped to ---------===//
//
// Traces record GPU counts and durations, not models. Like Sia and Gavel,
// each trace job is given a model type; here by its size in GPU-hours (a
// job that used more GPU time is taken to train a larger model). The sizes
// are GPT-style decoders (GPT-3 paper's table 2.1 shapes, GPT-2's vocab).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Traces.h"

#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

const std::vector<ModelClass> &frenzy::sched::traceModelClasses() {
  static const std::vector<ModelClass> classes = {
      {{"gpt-125m", 0, 12, 768, 12, 50257}, 32, 1024, 1},
      {{"gpt-350m", 0, 24, 1024, 16, 50257}, 32, 1024, 4},
      {{"gpt-1.3b", 0, 24, 2048, 16, 50257}, 64, 2048, 16},
      {{"gpt-2.7b", 0, 32, 2560, 32, 50257}, 64, 2048, 64},
      {{"gpt-6.7b", 0, 32, 4096, 32, 50257}, 128, 2048, 256},
      {{"gpt-13b", 0, 40, 5120, 40, 50257}, 128, 2048, INFINITY},
  };
  return classes;
}
