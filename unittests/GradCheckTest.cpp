//===- GradCheckTest.cpp - every gradient rule against finite differences -===//
//
// For each op with a GradientOpInterface rule: a tiny function applies the op
// to trainable parameters, the loss is sum(op(...) * R) for a fixed random
// R, frenzy-autodiff builds the backward graph, the CPU runtime executes it,
// and the gradients are compared with central differences of the same
// runtime's loss. This checks the rule and its backward kernel together.
// A test also fails when a rule exists without a case here.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"
#include "frenzy/InitAll.h"
#include "frenzy/Target/Plan/PlanWriter.h"

#include "Executor.h"
#include "plan.pb.h"
#include "plan/PlanVersion.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace mlir;

namespace {

struct GradCase {
  const char *op;      // the op whose rule is checked
  const char *params;  // "name: type; ..." trainable parameters
  const char *body;    // ops computing %y from the params
  const char *yType;   // type of %y
  double step = 1e-2;  // finite-difference step
};

// Values that feed kinks (relu, abs, max) are drawn away from them; pow and
// log and sqrt see positive inputs (params named pos* are drawn in [0.5, 2]).
const GradCase kCases[] = {
    {"neg", "a: tensor<3x4xf32>", "%y = frenzy.neg %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"abs", "a: tensor<3x4xf32>", "%y = frenzy.abs %a : tensor<3x4xf32>", "tensor<3x4xf32>", 1e-3},
    {"exp", "a: tensor<3x4xf32>", "%y = frenzy.exp %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"log", "pos: tensor<3x4xf32>", "%y = frenzy.log %pos : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"sqrt", "pos: tensor<3x4xf32>", "%y = frenzy.sqrt %pos : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"reciprocal", "pos: tensor<3x4xf32>", "%y = frenzy.reciprocal %pos : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"tanh", "a: tensor<3x4xf32>", "%y = frenzy.tanh %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"erf", "a: tensor<3x4xf32>", "%y = frenzy.erf %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"sigmoid", "a: tensor<3x4xf32>", "%y = frenzy.sigmoid %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"relu", "a: tensor<3x4xf32>", "%y = frenzy.relu %a : tensor<3x4xf32>", "tensor<3x4xf32>", 1e-3},
    {"sin", "a: tensor<3x4xf32>", "%y = frenzy.sin %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"cos", "a: tensor<3x4xf32>", "%y = frenzy.cos %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"silu", "a: tensor<3x4xf32>", "%y = frenzy.silu %a : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"gelu", "a: tensor<3x4xf32>", "%g = frenzy.gelu %a {approximate = \"tanh\"} : tensor<3x4xf32>\n%h = frenzy.gelu %a : tensor<3x4xf32>\n%y = frenzy.add %g, %h : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"add", "a: tensor<3x4xf32>; b: tensor<4xf32>", "%y = frenzy.add %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"sub", "a: tensor<3x1xf32>; b: tensor<4xf32>", "%y = frenzy.sub %a, %b : (tensor<3x1xf32>, tensor<4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"mul", "a: tensor<3x4xf32>; b: tensor<1x4xf32>", "%y = frenzy.mul %a, %b : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"div", "a: tensor<3x4xf32>; pos: tensor<4xf32>", "%y = frenzy.div %a, %pos : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"pow", "pos: tensor<3x4xf32>; b: tensor<f32>", "%y = frenzy.pow %pos, %b : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"max", "a: tensor<3x4xf32>; b: tensor<3x4xf32>", "%y = frenzy.max %a, %b : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>", 1e-3},
    {"min", "a: tensor<3x4xf32>; b: tensor<4xf32>", "%y = frenzy.min %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>", 1e-3},
    {"where", "a: tensor<3x4xf32>; b: tensor<4xf32>", "%c = frenzy.constant dense<[true, false, true, false]> : tensor<4xi1>\n%y = frenzy.where %c, %a, %b : (tensor<4xi1>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"cast", "a: tensor<3x4xf32>", "%y = frenzy.cast %a : tensor<3x4xf32> -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    // In one process the TP group has one rank: both are the identity; the
    // two-rank semantics are checked end to end (train-multirank.test).
    {"tp_copy", "a: tensor<4x4xf32>", "%y = frenzy.tp_copy %a : tensor<4x4xf32>", "tensor<4x4xf32>"},
    {"tp_all_reduce", "a: tensor<4x4xf32>", "%y = frenzy.tp_all_reduce %a : tensor<4x4xf32>", "tensor<4x4xf32>"},
    // Sequence parallelism's ops likewise (one chunk: the whole tensor);
    // two ranks end to end in train-sp.test.
    {"sp_scatter", "a: tensor<4x4xf32>", "%y = frenzy.sp_scatter %a : tensor<4x4xf32> -> tensor<4x4xf32>", "tensor<4x4xf32>"},
    {"sp_gather", "a: tensor<4x4xf32>", "%y = frenzy.sp_gather %a : tensor<4x4xf32> -> tensor<4x4xf32>", "tensor<4x4xf32>"},
    {"sp_all_gather", "a: tensor<4x4xf32>", "%y = frenzy.sp_all_gather %a : tensor<4x4xf32> -> tensor<4x4xf32>", "tensor<4x4xf32>"},
    {"sp_reduce_scatter", "a: tensor<4x4xf32>", "%y = frenzy.sp_reduce_scatter %a : tensor<4x4xf32> -> tensor<4x4xf32>", "tensor<4x4xf32>"},
    {"dropout", "a: tensor<8x8xf32>", "%y = frenzy.dropout %a {ratio = 0.3 : f64, training = true} : tensor<8x8xf32>", "tensor<8x8xf32>"},
    {"trilu", "a: tensor<2x4x4xf32>", "%y = frenzy.trilu %a {upper = false, k = 0 : i64} : tensor<2x4x4xf32>", "tensor<2x4x4xf32>"},
    {"matmul", "a: tensor<2x3x4xf32>; b: tensor<4x5xf32>; c: tensor<2x5x2xf32>", "%m = frenzy.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>\n%y = frenzy.matmul %m, %c : (tensor<2x3x5xf32>, tensor<2x5x2xf32>) -> tensor<2x3x2xf32>", "tensor<2x3x2xf32>"},
    {"gemm", "a: tensor<4x3xf32>; b: tensor<5x4xf32>; c: tensor<5xf32>", "%y = frenzy.gemm %a, %b, %c {transA = true, transB = true, alpha = 0.5 : f64, beta = 2.0 : f64} : (tensor<4x3xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>", "tensor<3x5xf32>"},
    {"layer_norm", "a: tensor<3x8xf32>; s: tensor<8xf32>; b: tensor<8xf32>", "%y = frenzy.layer_norm %a, %s, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<3x8xf32>", "tensor<3x8xf32>"},
    {"rms_norm", "a: tensor<3x8xf32>; s: tensor<8xf32>", "%y = frenzy.rms_norm %a, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>", "tensor<3x8xf32>"},
    {"softmax", "a: tensor<3x5xf32>", "%y = frenzy.softmax %a {axis = 0 : i64} : tensor<3x5xf32>", "tensor<3x5xf32>"},
    {"log_softmax", "a: tensor<3x5xf32>", "%y = frenzy.log_softmax %a {axis = 1 : i64} : tensor<3x5xf32>", "tensor<3x5xf32>"},
    {"swiglu", "a: tensor<3x4xf32>; b: tensor<3x4xf32>", "%y = frenzy.swiglu %a, %b : tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"attention", "q: tensor<2x2x4x3xf32>; k: tensor<2x2x4x3xf32>; v: tensor<2x2x4x3xf32>", "%m = frenzy.constant dense<[[false, true, false, false]]> : tensor<1x4xi1>\n%a = frenzy.attention %q, %k, %v, %m {scale = 0.5 : f64, causal, dropout = 0.2 : f64} : (tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<1x4xi1>) -> tensor<2x2x4x3xf32>\n%bias = frenzy.constant dense<[[0.0, -1.0, 0.5, 0.0]]> : tensor<1x4xf32>\n%b = frenzy.attention %q, %k, %v, %bias {scale = 0.7 : f64} : (tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<1x4xf32>) -> tensor<2x2x4x3xf32>\n%y = frenzy.add %a, %b : (tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32>", "tensor<2x2x4x3xf32>"},
    {"softmax_cross_entropy_loss", "a: tensor<4x5xf32>", "%t = frenzy.constant dense<[1, -100, 4, 0]> : tensor<4xi64>\n%y = frenzy.softmax_cross_entropy_loss %a, %t {ignore_index = -100 : i64, reduction = \"sum\"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>", "tensor<f32>"},
    {"reduce_sum", "a: tensor<3x4xf32>", "%y = frenzy.reduce_sum %a {axes = array<i64: 1>, keepdims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>", "tensor<3x1xf32>"},
    {"reduce_mean", "a: tensor<3x4xf32>", "%y = frenzy.reduce_mean %a {axes = array<i64: 0>, keepdims = false} : (tensor<3x4xf32>) -> tensor<4xf32>", "tensor<4xf32>"},
    {"transpose", "a: tensor<2x3x4xf32>", "%y = frenzy.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>", "tensor<4x2x3xf32>"},
    {"reshape", "a: tensor<2x6xf32>", "%y = frenzy.reshape %a : (tensor<2x6xf32>) -> tensor<3x4xf32>", "tensor<3x4xf32>"},
    {"expand", "a: tensor<3x1xf32>", "%y = frenzy.expand %a : (tensor<3x1xf32>) -> tensor<2x3x4xf32>", "tensor<2x3x4xf32>"},
    {"squeeze", "a: tensor<3x1xf32>", "%y = frenzy.squeeze %a {axes = array<i64: 1>} : (tensor<3x1xf32>) -> tensor<3xf32>", "tensor<3xf32>"},
    {"unsqueeze", "a: tensor<3xf32>", "%y = frenzy.unsqueeze %a {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<1x3xf32>", "tensor<1x3xf32>"},
    {"slice", "a: tensor<4x6xf32>", "%y = frenzy.slice %a {starts = array<i64: 1, 0>, limits = array<i64: 4, 6>, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<3x3xf32>", "tensor<3x3xf32>"},
    {"concat", "a: tensor<2x3xf32>; b: tensor<2x1xf32>", "%y = frenzy.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>", "tensor<2x4xf32>"},
    {"split", "a: tensor<2x6xf32>", "%s:2 = frenzy.split %a {axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>)\n%y = frenzy.slice %s#1 {starts = array<i64: 0, 0>, limits = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>", "tensor<2x2xf32>"},
    {"gather", "a: tensor<5x3xf32>", "%i = frenzy.constant dense<[[4, 0], [4, -1]]> : tensor<2x2xi64>\n%y = frenzy.gather %a, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>", "tensor<2x2x3xf32>"},
};

/// The loss is sum(y * r) with a fixed non-trainable r, so that every
/// element of y gets a different, non-trivial gradient.
std::string buildModule(const GradCase &c) {
  std::string params;
  llvm::SmallVector<llvm::StringRef> decls;
  llvm::StringRef(c.params).split(decls, ';');
  for (llvm::StringRef d : decls) {
    auto [name, type] = d.trim().split(':');
    params += "%" + name.trim().str() + " = frenzy.param \"" +
              name.trim().str() + "\" {storage = \"inline\", trainable} : " +
              type.trim().str() + "\n";
  }
  std::string y = c.yType;
  int rank = int(std::count(y.begin(), y.end(), 'x'));
  std::string axes;
  for (int i = 0; i < rank; ++i)
    axes += (i ? ", " : "") + std::to_string(i);
  std::string loss =
      rank == 0 ? "%loss = frenzy.add %yr, %zero : (tensor<f32>, tensor<f32>) -> "
                  "tensor<f32>\n"
                : "%loss = frenzy.reduce_sum %yr {axes = array<i64: " + axes +
                      ">, keepdims = false} : (" + y + ") -> tensor<f32>\n";
  return "module {\nfunc.func @forward() -> (tensor<f32> {frenzy.name = "
         "\"loss\"}) {\n" +
         params + c.body + "\n%r = frenzy.param \"r\" {storage = \"inline\"} : " +
         y + "\n%zero = frenzy.constant dense<0.0> : tensor<f32>\n" +
         "%yr = frenzy.mul %y, %r : (" + y + ", " + y + ") -> " + y + "\n" +
         loss + "return %loss : tensor<f32>\n}\n}\n";
}

/// Random values per parameter: "pos*" in [0.5, 2], others in [-1, 1] but
/// at least 0.05 from 0 and from each other's kinks.
void fill(frenzy::rt::Tensor &t, const std::string &name, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), p(0.5f, 2.0f);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = name.rfind("pos", 0) == 0 ? p(rng) : u(rng);
    if (std::fabs(v) < 0.05f)
      v = v < 0 ? v - 0.05f : v + 0.05f;
    t.f32()[i] = v;
  }
}

double loss(frenzy::rt::Executor &ex) {
  ex.runStep(1, 7);
  return ex.output("loss")->f32()[0];
}

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  const GradCase &c = GetParam();
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  MLIRContext ctx(registry);
  std::string text = buildModule(c);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(module) << text;
  PassManager pm(&ctx);
  pm.addPass(frenzy::createFrenzyAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*module))) << text;

  frenzy::plan::Plan plan;
  plan.set_version(frenzy::plan::kPlanVersion);
  ASSERT_TRUE(succeeded(frenzy::lowerProgram(*module, *plan.mutable_program())));
  frenzy::rt::Executor ex(plan);
  std::mt19937 rng(1234);
  std::vector<std::string> trainable;
  for (const auto &p : plan.program().params()) {
    fill(*ex.parameter(p.name()), p.name(), rng);
    if (p.trainable())
      trainable.push_back(p.name());
  }
  ASSERT_FALSE(trainable.empty());
  // All analytic gradients first: the finite differences below re-run the
  // step and overwrite them.
  loss(ex);
  std::map<std::string, std::vector<float>> grads;
  for (const std::string &name : trainable) {
    const frenzy::rt::Tensor *g = ex.output("grad." + name);
    ASSERT_NE(g, nullptr) << "no gradient for " << name;
    grads[name].assign(g->f32(), g->f32() + g->numel());
  }
  for (const std::string &name : trainable) {
    const std::vector<float> &analytic = grads[name];
    frenzy::rt::Tensor &x = *ex.parameter(name);
    double num2 = 0, diff2 = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      float keep = x.f32()[i];
      x.f32()[i] = keep + float(c.step);
      double up = loss(ex);
      x.f32()[i] = keep - float(c.step);
      double down = loss(ex);
      x.f32()[i] = keep;
      double numeric = (up - down) / (2 * c.step);
      num2 += numeric * numeric;
      diff2 += (numeric - analytic[i]) * (numeric - analytic[i]);
    }
    double rel = std::sqrt(diff2) / std::max(std::sqrt(num2), 1e-3);
    EXPECT_LT(rel, 1e-2) << c.op << ": gradient of '" << name
                         << "' differs from finite differences by " << rel
                         << " (relative)";
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllRules, GradCheck, ::testing::ValuesIn(kCases),
    [](const ::testing::TestParamInfo<GradCase> &info) {
      return std::string(info.param.op);
    });

TEST(GradCheckCoverage, EveryRuleHasACase) {
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::set<std::string> covered;
  for (const GradCase &c : kCases)
    covered.insert(std::string("frenzy.") + c.op);
  int rules = 0;
  for (RegisteredOperationName op : ctx.getRegisteredOperations()) {
    if (!op.hasInterface<frenzy::GradientOpInterface>())
      continue;
    ++rules;
    EXPECT_TRUE(covered.count(op.getStringRef().str()))
        << op.getStringRef().str()
        << " has a gradient rule but no finite-difference case";
  }
  EXPECT_EQ(rules, int(covered.size()));
}

} // namespace
