//===- KernelBench.cpp - time the runtime's kernels -----------------------===//
#include "KernelBench.h"

#include "Executor.h"
#include "plan/KernelCost.h"
#include "plan/PlanVersion.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

namespace frenzy::calibrate {

namespace {

using Clock = std::chrono::steady_clock;

/// A one-program plan under construction: every tensor an input (allocated
/// once), every instruction the kernel under test.
struct Builder {
  plan::Plan plan;
  Builder() {
    plan.set_version(plan::kPlanVersion);
    plan.set_precision("fp32");
  }
  int tensor(std::vector<int64_t> shape) {
    plan::Tensor *t = plan.mutable_program()->add_tensors();
    t->set_id(plan.program().tensors_size() - 1);
    t->set_dtype(plan::F32);
    t->set_kind(plan::INPUT);
    for (int64_t d : shape)
      t->add_shape(d);
    return t->id();
  }
  plan::Instr &instr(const std::string &op, std::vector<int> in,
                         std::vector<int> out) {
    plan::Instr *i = plan.mutable_program()->add_instrs();
    i->set_op(op);
    for (int x : in)
      i->add_inputs(x);
    for (int x : out)
      i->add_outputs(x);
    return *i;
  }
};

void setF(plan::Instr &in, const char *name, double v) {
  (*in.mutable_attrs())[name].set_f(v);
}
void setI(plan::Instr &in, const char *name, int64_t v) {
  (*in.mutable_attrs())[name].set_i(v);
}

/// Median seconds of one pass over the program's instructions.
double timeProgram(const plan::Plan &plan, int rounds) {
  rt::Executor ex(plan);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (int id = 0; id < plan.program().tensors_size(); ++id) {
    rt::Tensor &t = ex.tensor(id);
    for (int64_t e = 0; e < t.numel(); ++e)
      t.f32()[e] = u(rng);
  }
  ex.beginStep(1, 1);
  std::vector<int32_t> all(plan.program().instrs_size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = int32_t(i);
  ex.run(all); // warm: pages, caches, BLAS buffers
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    ex.run(all);
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

/// `reps` calls of a kernel built by `make` (which returns the builder);
/// the rate of one call for `work` (flops or bytes) per call.
template <typename Make>
Point rateOf(Make make, int reps, int rounds, std::string what) {
  Builder b;
  double work = make(b, reps);
  double sec = timeProgram(b.plan, rounds) / reps;
  return {work, work / sec, std::move(what)};
}

} // namespace

KernelProfile measureKernels(bool quick) {
  KernelProfile p;
  int rounds = quick ? 3 : 9;
  // Contractions: the shapes of small transformer layers up to ones that
  // fill the caches (M rows = micro-batch x sequence).
  std::vector<std::array<int64_t, 3>> gemms =
      quick ? std::vector<std::array<int64_t, 3>>{{128, 64, 64}, {512, 256, 64}}
            : std::vector<std::array<int64_t, 3>>{
                  {64, 64, 64},    {128, 64, 64},    {128, 192, 64},
                  {512, 64, 64},   {512, 256, 64},   {512, 64, 256},
                  {512, 1000, 64}, {1024, 1024, 1024}};
  for (auto [M, N, K] : gemms) {
    double flops = 2.0 * double(M * N * K);
    int reps = int(std::clamp(2e8 / flops, 1.0, 64.0));
    p.matmul.push_back(rateOf(
        [&](Builder &b, int n) {
          int a = b.tensor({M, K}), w = b.tensor({K, N}), y = b.tensor({M, N});
          for (int i = 0; i < n; ++i)
            b.instr("matmul", {a, w}, {y});
          return flops;
        },
        reps, rounds,
        std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K)));
  }
  // Attention forward and backward, causal, head dim 16, sequence 64.
  for (int64_t bh : quick ? std::vector<int64_t>{8} : std::vector<int64_t>{8, 32, 128})
    for (bool grad : {false, true}) {
      const int64_t T = 64, D = 16;
      p.attention.push_back(rateOf(
          [&](Builder &b, int n) {
            int q = b.tensor({bh, T, D}), k = b.tensor({bh, T, D}),
                v = b.tensor({bh, T, D}), dy = b.tensor({bh, T, D});
            int o = b.tensor({bh, T, D}), dq = b.tensor({bh, T, D}),
                dk = b.tensor({bh, T, D}), dv = b.tensor({bh, T, D});
            for (int i = 0; i < n; ++i) {
              plan::Instr &in =
                  grad ? b.instr("attention_grad", {dy, q, k, v}, {dq, dk, dv})
                       : b.instr("attention", {q, k, v}, {o});
              setF(in, "scale", 0.25);
              setI(in, "causal", 1);
            }
            return plan::attentionFlops(
                b.plan.program(), b.plan.program().instrs(0));
          },
          8, rounds,
          std::string(grad ? "attention_grad " : "attention ") +
              std::to_string(bh) + "x" + std::to_string(T) + "x" +
              std::to_string(D)));
    }
  // Memory-bound kernels: the mean rate of binary and unary elementwise
  // ops at each size (bytes read + written per call).
  for (int64_t n : quick ? std::vector<int64_t>{1 << 14}
                         : std::vector<int64_t>{1 << 12, 1 << 15, 1 << 18,
                                                1 << 21, 1 << 23}) {
    double sum = 0;
    const char *ops[] = {"add", "mul", "tanh", "exp"};
    for (const char *op : ops) {
      bool unary = std::strcmp(op, "tanh") == 0 || std::strcmp(op, "exp") == 0;
      double bytes = double(n) * 4 * (unary ? 2 : 3);
      int reps = int(std::clamp(4e7 / bytes, 1.0, 256.0));
      sum += rateOf(
                 [&](Builder &b, int k) {
                   int x = b.tensor({n}), y = b.tensor({n}), z = b.tensor({n});
                   for (int i = 0; i < k; ++i)
                     b.instr(op, unary ? std::vector<int>{x}
                                       : std::vector<int>{x, y},
                             {z});
                   return bytes;
                 },
                 reps, rounds, op)
                 .rate;
    }
    p.memory.push_back({double(n) * 4 * 2.5, sum / 4,
                        std::to_string(n) + " floats"});
  }
  // The fixed cost of a kernel: a one-element add, many times.
  {
    Builder b;
    int x = b.tensor({1}), y = b.tensor({1}), z = b.tensor({1});
    const int n = 2000;
    for (int i = 0; i < n; ++i)
      b.instr("add", {x, y}, {z});
    p.opOverheadSeconds = timeProgram(b.plan, rounds) / n;
  }
  return p;
}

} // namespace frenzy::calibrate
