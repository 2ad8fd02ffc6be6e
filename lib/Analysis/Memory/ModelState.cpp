//===- ModelState.cpp - weights, gradients and optimizer state with ZeRO --===//
//
// Per parameter, mixed precision keeps a 16-bit weight and gradient and fp32
// master weight and moments: 2 + 2 + 4 + 4 + 4 = 16 bytes for Adam (K = 12
// bytes of optimizer state in ZeRO's notation); fp32 training keeps
// 4 + 4 + 4 + 4. ZeRO partitions the optimizer state (stage 1), then the
// gradients (2), then the weights (3) over the data-parallel group.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Memory/MemoryAnalysis.h"

using namespace frenzy;

std::optional<Recompute> frenzy::parseRecompute(llvm::StringRef name) {
  if (name == "none")
    return Recompute::None;
  if (name == "selective")
    return Recompute::Selective;
  if (name == "full")
    return Recompute::Full;
  return std::nullopt;
}

llvm::StringRef frenzy::recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "selective";
}

ModelStateBytes frenzy::modelStateBytes(int64_t params, Precision p,
                                        int moments, int64_t dp, int zero) {
  PrecisionBytes b = precisionBytes(p);
  auto part = [&](int64_t bytes, int fromStage) {
    // Partitioned state is split evenly; a remainder goes to some ranks, so
    // the per-rank figure rounds up.
    return zero >= fromStage ? (bytes + dp - 1) / dp : bytes;
  };
  ModelStateBytes s;
  s.parameters = params;
  s.weights = part(params * b.weight, 3);
  s.gradients = part(params * b.gradient, 2);
  s.master = part(params * b.master, 1);
  s.moments = part(params * b.moment * moments, 1);
  return s;
}
