//===- SpeedEmulation.cpp - CPU ranks that run at a GPU's pace ------------===//
#include "SpeedEmulation.h"

#include "Tensor.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <thread>

namespace frenzy::rt {

std::vector<double> timelineFactors(const plan::Plan &p,
                                    const std::vector<double> &cpu,
                                    double base) {
  std::vector<double> ratio; // predicted seconds per measured CPU second
  for (const plan::Rank &r : p.ranks()) {
    double pred = 0;
    for (const plan::StageProgram &sp : p.stages())
      for (int32_t id : sp.ranks())
        if (id == r.id())
          pred = sp.predicted_seconds();
    double c = size_t(r.id()) < cpu.size() ? cpu[size_t(r.id())] : 0;
    if (!(pred > 0))
      throw RuntimeError("--emulate-speed: the plan predicts no compute time "
                         "for rank " + std::to_string(r.id()) + " (" +
                         r.gpu_type() + "); re-run frenzy-opt, or give the "
                         "factors: --emulate-speed=RANK:FACTOR,...");
    ratio.push_back(c > 0 ? pred / c : 0);
  }
  double least = 0;
  for (double x : ratio)
    if (x > 0 && (least == 0 || x < least))
      least = x;
  std::vector<double> f;
  for (double x : ratio) // a rank that measured no compute keeps `base`
    f.push_back(least > 0 && x > 0 ? base * x / least : base);
  return f;
}

double planEmulationBase(const std::string &spec) {
  if (spec == "plan")
    return 3.0;
  if (spec.rfind("plan:", 0) != 0)
    return 0;
  char *end = nullptr;
  double b = std::strtod(spec.c_str() + 5, &end);
  if (spec.size() == 5 || *end || !(b >= 1) || !std::isfinite(b))
    throw RuntimeError("--emulate-speed=" + spec + ": the base after 'plan:' "
                       "must be a number >= 1 (e.g. --emulate-speed=plan:4)");
  return b;
}

std::vector<double> parseSpeedFactors(const std::string &spec, int ranks) {
  std::vector<double> f(size_t(std::max(ranks, 0)), 1.0);
  size_t at = 0;
  while (at <= spec.size()) {
    size_t comma = spec.find(',', at);
    std::string item = spec.substr(at, comma == std::string::npos
                                           ? std::string::npos
                                           : comma - at);
    size_t colon = item.find(':');
    char *e1 = nullptr, *e2 = nullptr;
    long r = colon == std::string::npos ? -1 : std::strtol(item.c_str(), &e1, 10);
    double x = colon == std::string::npos
                   ? 0
                   : std::strtod(item.c_str() + colon + 1, &e2);
    if (colon == std::string::npos || e1 != item.c_str() + colon || *e2 ||
        item.size() == colon + 1 || !(x >= 1) || !std::isfinite(x))
      throw RuntimeError("--emulate-speed=" + spec + ": '" + item +
                         "' is not RANK:FACTOR with FACTOR >= 1 (e.g. "
                         "--emulate-speed=1:2.5,3:4)");
    if (r < 0 || r >= ranks)
      throw RuntimeError("--emulate-speed=" + spec + ": rank " +
                         std::to_string(r) + " is not a rank of the plan "
                         "(0-" + std::to_string(ranks - 1) + ")");
    f[size_t(r)] = x;
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return f;
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double steadySeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double emulateUntil(double start, double cpu, double factor, double &debt) {
  if (factor <= 1)
    return 0;
  double want = factor * cpu, now = steadySeconds();
  double target = start + want - debt, slept = 0;
  if (now < target) {
    auto until = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(target)));
    std::this_thread::sleep_until(until);
    slept = steadySeconds() - now;
  }
  debt = std::max(0.0, debt + (steadySeconds() - start) - want);
  return slept;
}

} // namespace frenzy::rt
