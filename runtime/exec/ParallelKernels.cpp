//===- ParallelKernels.cpp - tensor-parallel communication ----------------===//
//
// tp_copy is a copy; tp_all_reduce sums its result over the rank's TP group
// through the step context (the rank runner binds it to MPI).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <cstring>

namespace frenzy::rt {
namespace {

void tpCopy(KernelArgs &a) {
  std::memcpy(a.out[0]->data(), a.in[0]->data(), a.in[0]->bytes());
}

void tpAllReduce(KernelArgs &a) {
  if (a.in[0]->dtype != plan::F32)
    a.fail("tp_all_reduce sums f32 tensors only");
  std::memcpy(a.out[0]->data(), a.in[0]->data(), a.in[0]->bytes());
  if (a.ctx.tpAllReduce)
    a.ctx.tpAllReduce(a.out[0]->f32(), a.out[0]->numel());
}

} // namespace

void registerParallelKernels(KernelTable &t) {
  t["tp_copy"] = tpCopy;
  t["tp_all_reduce"] = tpAllReduce;
}

} // namespace frenzy::rt
