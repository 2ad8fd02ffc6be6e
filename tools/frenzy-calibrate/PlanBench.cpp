//===- PlanBench.cpp - kernel rates inside a reference step ---------------===//
//
// A loop over one kernel keeps its operands in the nearest cache; a
// training step does not (each kernel reads what others wrote, weights come
// from further away), and on the CPU this makes GEMMs in a step 2-3x slower
// than in a loop. frenzy-calibrate --plan=REF.bin therefore also times a
// real step instruction by instruction: contraction and attention points
// by size, and a rate per memory-bound kernel kind.
//
//===----------------------------------------------------------------------===//
#include "KernelBench.h"

#include "Executor.h"
#include "PlanLoader.h"
#include "plan/KernelCost.h"
#include "plan/TraceFormat.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

namespace frenzy::calibrate {

void measurePlan(const std::string &planPath, int steps, KernelProfile &p) {
  plan::Plan pl = rt::loadPlanFile(planPath);
  if (pl.ranks_size() > 1)
    throw rt::RuntimeError(planPath + ": a plan of " +
                           std::to_string(pl.ranks_size()) +
                           " ranks; calibrate with a one-rank plan");
  rt::Executor ex(pl);
  ex.loadWeights(1234); // matrices from a seed: no trained values needed
  const plan::Program &prog = ex.program();
  int n = prog.instrs_size();
  std::vector<std::vector<double>> times(n);
  for (int s = 0; s <= steps; ++s) {
    ex.beginStep(s + 1, 1);
    for (int32_t i = 0; i < n; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      ex.run({i});
      double sec = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - t0)
                       .count();
      if (s > 0) // the first step allocates and faults pages in
        times[i].push_back(sec);
    }
  }
  // Contractions and attention: one point per distinct size (median over
  // the calls of that size); memory-bound kernels: bytes over time per op.
  std::map<std::pair<int, double>, std::vector<double>> bySize; // (class, flops)
  std::map<std::string, std::array<double, 3>> byOp; // bytes, seconds, calls
  for (int32_t i = 0; i < n; ++i) {
    const plan::Instr &ins = prog.instrs(i);
    // The mean, not the median: a step pays every call's time, the
    // occasional slow one (a cache or TLB refill) included.
    const std::vector<double> &t = times[i];
    double sec = 0;
    for (double x : t)
      sec += x / double(t.size());
    auto [flops, bytes] = plan::kernelWork(prog, ins);
    plan::OpClass c = plan::opClassOf(ins.op());
    if ((c == plan::kMatmul || c == plan::kAttention) && flops > 0) {
      bySize[{int(c), flops}].push_back(flops / sec);
    } else if (bytes > 0) {
      auto &[b, s, calls] = byOp[ins.op()];
      b += bytes;
      s += std::max(sec - p.opOverheadSeconds, 1e-9);
      calls += 1;
    }
  }
  if (p.reference.empty()) { // the first plan replaces the synthetic tables
    p.matmul.clear();
    p.attention.clear();
  }
  for (auto &[key, rates] : bySize) {
    std::sort(rates.begin(), rates.end());
    (key.first == plan::kMatmul ? p.matmul : p.attention)
        .push_back({key.second, rates[rates.size() / 2],
                    std::to_string(rates.size()) + " call(s) in the step"});
  }
  for (auto &[op, bsc] : byOp)
    p.opRates.push_back({op, {bsc[0] / bsc[2], bsc[0] / bsc[1], planPath}});
  p.reference += (p.reference.empty() ? "" : ", ") + planPath;
}

} // namespace frenzy::calibrate
