//===- TokenInputs.h - a plan's inputs fed from a token file ----*- C++ -*-===//
#ifndef FRENZY_RUNTIME_EXEC_TOKENINPUTS_H
#define FRENZY_RUNTIME_EXEC_TOKENINPUTS_H

#include "Executor.h"
#include "TokenData.h"

namespace frenzy::rt {

/// The plan's token inputs: ids and targets (by name), and id-shaped inputs
/// that a plain token stream fills with defaults (token types 0, mask 1).
/// A rank may hold only some of them (the head stage reads the targets, the
/// first stage the ids); fill() skips the ones it does not hold.
struct TokenInputs {
  Tensor *ids = nullptr, *targets = nullptr;
  std::vector<std::pair<Tensor *, int64_t>> defaults;

  /// Throws when the plan's inputs are not [B, T] ids and targets.
  static TokenInputs bind(Executor &ex);
  int64_t rows() const { return ids->shape[0]; }
  int64_t seq() const { return ids->shape[1]; }
  /// Rows [first, first + rows()) of step `step`'s batch of `batch` rows.
  void fill(const TokenData &data, int64_t step, int64_t batch,
            int64_t first) const;
};

} // namespace frenzy::rt

#endif
