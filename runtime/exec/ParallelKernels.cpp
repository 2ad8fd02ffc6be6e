//===- ParallelKernels.cpp - tensor-parallel communication ----------------===//
//
// tp_all_reduce sums its result over the rank's TP group through the step
// context (the rank runner binds it to MPI). tp_copy, its forward twin, is
// a plain copy (MovementKernels.cpp). Sequence parallelism's ops move
// chunks of the flattened tokens: the TP degree is the ratio of the
// whole's elements to the chunk's (the contract checks it divides).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <cstring>

namespace frenzy::rt {
namespace {

void tpAllReduce(KernelArgs &a) {
  if (a.in[0]->dtype != plan::F32)
    a.fail("tp_all_reduce sums f32 tensors only");
  std::memcpy(a.out[0]->data(), a.in[0]->data(), a.in[0]->bytes());
  if (a.ctx.tpAllReduce)
    a.ctx.tpAllReduce(a.out[0]->f32(), a.out[0]->numel());
}

/// sp_scatter: this rank's chunk of a replicated input (no communication).
void spScatter(KernelArgs &a) {
  int64_t n = a.out[0]->numel();
  std::memcpy(a.out[0]->data(), a.in[0]->f32() + a.ctx.tpRank * n,
              size_t(n) * sizeof(float));
}

/// sp_gather, sp_all_gather: every rank's chunk, in rank order.
void spAllGather(KernelArgs &a) {
  int64_t n = a.in[0]->numel();
  if (a.ctx.tpAllGather)
    a.ctx.tpAllGather(a.in[0]->f32(), a.out[0]->f32(), n);
  else if (a.out[0]->numel() == n)
    std::memcpy(a.out[0]->data(), a.in[0]->data(), a.in[0]->bytes());
  else
    a.fail("sp_all_gather outside a TP group");
}

/// sp_reduce_scatter: the group's sum, this rank's chunk of it.
void spReduceScatter(KernelArgs &a) {
  int64_t n = a.out[0]->numel();
  if (a.ctx.tpReduceScatter)
    a.ctx.tpReduceScatter(a.in[0]->f32(), a.out[0]->f32(), n);
  else if (a.in[0]->numel() == n)
    std::memcpy(a.out[0]->data(), a.in[0]->data(), a.in[0]->bytes());
  else
    a.fail("sp_reduce_scatter outside a TP group");
}

} // namespace

void registerParallelKernels(KernelTable &t) {
#define FRENZY_PARALLEL_OP(Id, Name, Where, Kernel, ...) t[OpId::Id] = Kernel;
#include "Ops.def"
}

} // namespace frenzy::rt
