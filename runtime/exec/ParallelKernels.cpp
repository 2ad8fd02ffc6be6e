//===- ParallelKernels.cpp - tensor-parallel communication ----------------===//
//
// tp_all_reduce sums its result over the rank's TP group through the step
// context (the rank runner binds it to MPI). tp_copy, its forward twin, is
// a plain copy (MovementKernels.cpp).
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

} // namespace

void registerParallelKernels(KernelTable &t) {
#define FRENZY_PARALLEL_OP(Id, Name, Where, Kernel, ...) t[OpId::Id] = Kernel;
#include "Ops.def"
}

} // namespace frenzy::rt
