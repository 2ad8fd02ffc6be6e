//===- TokenInputs.cpp - a plan's inputs fed from a token file ------------===//
#include "TokenInputs.h"

#include <algorithm>

namespace frenzy::rt {

TokenInputs TokenInputs::bind(Executor &ex) {
  TokenInputs b;
  for (const plan::Io &io : ex.program().inputs()) {
    Tensor *t = ex.input(io.name());
    const std::string &n = io.name();
    if (n == "targets" || n == "labels" || n == "target")
      b.targets = t;
    else if (n.find("token_type") != std::string::npos)
      b.defaults.emplace_back(t, 0);
    else if (n.find("mask") != std::string::npos)
      b.defaults.emplace_back(t, 1);
    else if (!b.ids && t->dtype == plan::I64)
      b.ids = t;
  }
  if (!b.ids || !b.targets || b.ids->shape != b.targets->shape ||
      b.ids->shape.size() != 2 || b.targets->dtype != plan::I64)
    throw RuntimeError("--data needs a plan with token-id and targets inputs "
                       "of one shape [B, T]; this plan's inputs do not fit "
                       "(feed them with --input=NAME=FILE instead)");
  for (auto [t, v] : b.defaults)
    if (!t->storage.empty() && t->dtype == plan::I64)
      std::fill(t->i64(), t->i64() + t->numel(), v);
  return b;
}

void TokenInputs::fill(const TokenData &data, int64_t step, int64_t batch,
                       int64_t first) const {
  // The windows are cut at this input's sequence length: the file must hold
  // one batch of it (cheap, and the plan's own batch and seq may differ).
  data.requireBatch(batch, seq());
  data.rows(step, batch, seq(), first, rows(),
            ids->storage.empty() ? nullptr : ids->i64(),
            targets->storage.empty() ? nullptr : targets->i64());
}

} // namespace frenzy::rt
