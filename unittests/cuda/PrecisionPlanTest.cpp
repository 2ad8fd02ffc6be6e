//===- PrecisionPlanTest.cpp - mixed-precision storage of the CUDA backend ===//
#include "Kernel.h"
#include "PrecisionPlan.h"
#include "Tensor.h"

#include <gtest/gtest.h>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

int addTensor(plan::Program &p, plan::TensorKind kind,
              plan::DType dtype = plan::F32) {
  plan::Tensor *t = p.add_tensors();
  t->set_id(p.tensors_size() - 1);
  t->set_kind(kind);
  t->set_dtype(dtype);
  t->add_shape(4);
  return t->id();
}

void addInstr(plan::Program &p, const char *op, std::vector<int> in,
              std::vector<int> out) {
  plan::Instr *i = p.add_instrs();
  i->set_op(op);
  for (int x : in)
    i->add_inputs(x);
  for (int x : out)
    i->add_outputs(x);
}

/// A layer and its update: h = x W; y = layer_norm(h; g, b); r = reshape y;
/// loss = ce(r, labels); dr = ce_grad(dloss, r, labels); dW = matmul;
/// adamw(W, dW, scale).
struct Layer {
  plan::Program p;
  int x, w, g, b, labels, dloss, scale, h, y, r, loss, dr, dw;
  Layer() {
    x = addTensor(p, plan::INPUT);
    w = addTensor(p, plan::PARAM);
    g = addTensor(p, plan::PARAM);
    b = addTensor(p, plan::PARAM);
    labels = addTensor(p, plan::INPUT, plan::I64);
    dloss = addTensor(p, plan::CONSTANT);
    scale = addTensor(p, plan::ACTIVATION);
    h = addTensor(p, plan::ACTIVATION);
    y = addTensor(p, plan::ACTIVATION);
    r = addTensor(p, plan::ACTIVATION);
    loss = addTensor(p, plan::ACTIVATION);
    dr = addTensor(p, plan::ACTIVATION);
    dw = addTensor(p, plan::ACTIVATION);
    addInstr(p, "matmul", {x, w}, {h});                              // 0
    addInstr(p, "layer_norm", {h, g, b}, {y});                       // 1
    addInstr(p, "reshape", {y}, {r});                                // 2
    addInstr(p, "softmax_cross_entropy_loss", {r, labels}, {loss});  // 3
    addInstr(p, "cross_entropy_grad", {dloss, r, labels}, {dr});     // 4
    addInstr(p, "matmul", {x, dr}, {dw});                            // 5
    addInstr(p, "clip_grad_norm", {dw}, {addTensor(p, plan::ACTIVATION), scale}); // 6
    addInstr(p, "adamw_update", {w, dw, scale}, {});                 // 7
    plan::Io *o = p.add_outputs();
    o->set_name("loss");
    o->set_tensor(loss);
  }
};

TEST(PrecisionPlan, Fp32IsAllF32WithoutCasts) {
  Layer l;
  PrecisionPlan pp = planPrecision(l.p, "fp32");
  for (FloatStore s : pp.storage)
    EXPECT_EQ(s, FloatStore::F32);
  EXPECT_EQ(pp.castsPerStep(l.p), 0);
  EXPECT_FALSE(pp.lossScaling);
}

TEST(PrecisionPlan, Bf16StoresActivationsInBf16AndMasterWeightsInF32) {
  Layer l;
  PrecisionPlan pp = planPrecision(l.p, "bf16-mixed");
  EXPECT_EQ(pp.compute, FloatStore::BF16);
  auto st = [&](int id) { return pp.storage[size_t(id)]; };
  EXPECT_EQ(st(l.w), FloatStore::F32);     // parameter: master weight
  EXPECT_EQ(st(l.x), FloatStore::F32);     // input
  EXPECT_EQ(st(l.h), FloatStore::BF16);    // matmul result
  EXPECT_EQ(st(l.y), FloatStore::BF16);    // layer norm result
  EXPECT_EQ(st(l.r), FloatStore::BF16);    // reshape keeps its data's type
  EXPECT_EQ(st(l.loss), FloatStore::F32);  // the loss
  EXPECT_EQ(st(l.dr), FloatStore::BF16);   // activation gradient
  EXPECT_EQ(st(l.dw), FloatStore::F32);    // the optimizer reads it
  EXPECT_EQ(st(l.scale), FloatStore::F32); // the clip factor
  // The ops: matmul in bf16, its operands x and W cast from f32; layer
  // norm weights stay f32; the loss seed stays f32.
  EXPECT_EQ(pp.opType[0], FloatStore::BF16);
  EXPECT_EQ(pp.need(0, 1, false), FloatStore::BF16);
  EXPECT_EQ(pp.need(1, 1, false), FloatStore::F32);
  EXPECT_EQ(pp.opType[2], FloatStore::BF16);
  EXPECT_EQ(pp.need(4, 0, false), FloatStore::F32);
  EXPECT_EQ(pp.opType[7], FloatStore::F32);
  // Casts: x and W into matmul 0, x into matmul 5, dW out of matmul 5.
  EXPECT_EQ(pp.castsPerStep(l.p), 4);
}

TEST(PrecisionPlan, Fp16ScalesTheLoss) {
  Layer l;
  PrecisionPlan pp = planPrecision(l.p, "fp16-mixed");
  EXPECT_TRUE(pp.lossScaling);
  EXPECT_EQ(pp.storage[size_t(l.h)], FloatStore::F16);
}

TEST(PrecisionPlan, RefusesWhatItCannotRun) {
  Layer l;
  EXPECT_THROW(planPrecision(l.p, "int8"), RuntimeError);
  addInstr(l.p, "fft", {l.x}, {l.h});
  try {
    planPrecision(l.p, "fp32");
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "instruction 8 ('fft', node ''): the CUDA backend "
                           "has no kernel for it; use --backend=cpu");
  }
}

TEST(PrecisionPlan, TypesEveryOpOfTheCpuBackend) {
  // Any op the CPU backend runs has a typing here or is refused by name
  // (and, in a CUDA build, an adapter: unittests/cuda/CudaOpsTest.cpp).
  for (OpId id : allOps()) {
    Layer l;
    addInstr(l.p, opName(id), {}, {});
    if (opInfo(id).onCuda()) {
      PrecisionPlan pp = planPrecision(l.p, "fp32");
      EXPECT_EQ(pp.typing.back(), &opTyping(id)) << opName(id);
      continue;
    }
    try {
      planPrecision(l.p, "fp32");
      ADD_FAILURE() << opName(id) << " is CpuOnly but was not refused";
    } catch (const RuntimeError &e) {
      EXPECT_EQ(std::string(e.what()),
                "instruction 8 ('" + std::string(opName(id)) +
                    "', node ''): the CUDA backend has no kernel for it; "
                    "use --backend=cpu");
    }
  }
}

TEST(PrecisionPlan, RefusesAPlanNamingTheProgram) {
  // The whole-plan check frenzy-launch makes before any communicator.
  plan::Plan p;
  *p.mutable_program() = Layer().p;
  requireCudaOps(p); // one program, every op on CUDA
  plan::Program *more = p.add_more_programs();
  *more = Layer().p;
  more->mutable_instrs(3)->set_op("fft");
  more->mutable_instrs(3)->set_node("/blocks.1/fft");
  try {
    requireCudaOps(p);
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "program 1 instruction 3 ('fft', node "
                           "'/blocks.1/fft'): the CUDA backend has no kernel "
                           "for it; use --backend=cpu");
  }
}

} // namespace
