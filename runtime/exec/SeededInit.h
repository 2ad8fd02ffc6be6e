//===- SeededInit.h - initial weights from a seed ---------------*- C++ -*-===//
//
// `frenzy-launch --init=seed` trains from scratch: every trainable
// parameter of rank >= 2 (the matrices) is drawn from N(0, 0.02^2), GPT-2's
// initialisation; vectors (biases, norm scales) keep the model file's
// values. Element i of parameter P is a pure function of (seed, P's name,
// i), a counter-based Box-Muller draw over the unsplit tensor, so any
// partition (pipeline stages, TP shards) starts from the same weights as
// one rank.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_SEEDEDINIT_H
#define FRENZY_RUNTIME_EXEC_SEEDEDINIT_H

#include "Tensor.h"

namespace frenzy::rt {

/// Whether --init=seed replaces this parameter (trainable, rank >= 2, f32).
bool seededInitApplies(const plan::ParamSource &p, const Tensor &full);
/// Fills `full` (the unsplit parameter) from the seed.
void seededInit(const plan::ParamSource &p, Tensor &full, uint64_t seed);

} // namespace frenzy::rt

#endif
