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

bool predictsActions(const plan::Plan &p) {
  bool any = false;
  for (const plan::Rank &r : p.ranks())
    for (const plan::Action &a : r.stream()) {
      bool compute = a.kind() == plan::Action::FORWARD ||
                     a.kind() == plan::Action::BACKWARD;
      if (compute && !(a.predicted_seconds() > 0))
        return false;
      any |= compute;
    }
  return any;
}

std::vector<double> predictedPerMicroBatch(const plan::Plan &p) {
  std::vector<double> pred;
  bool actions = predictsActions(p);
  for (const plan::Rank &r : p.ranks()) {
    double x = 0;
    for (const plan::StageProgram &sp : p.stages())
      for (int32_t id : sp.ranks())
        if (id == r.id()) {
          x = sp.predicted_seconds();
          // The timeline's own forwards and backwards, when recorded.
          double sum = 0;
          for (const plan::Action &a : r.stream())
            if (a.kind() == plan::Action::FORWARD ||
                a.kind() == plan::Action::BACKWARD)
              sum += a.predicted_seconds();
          if (actions && sp.micro_batches() > 0)
            x = sum / double(sp.micro_batches());
        }
    if (!(x > 0) || !std::isfinite(x))
      throw RuntimeError("--emulate-speed: the plan predicts no compute time "
                         "for rank " + std::to_string(r.id()) + " (" +
                         r.gpu_type() + "); re-run frenzy-opt, or give the "
                         "factors: --emulate-speed=RANK:FACTOR,...");
    pred.push_back(x);
  }
  return pred;
}

double timelineScale(const std::vector<double> &pred,
                     const std::vector<double> &cpu, double base) {
  // The rank with the most CPU time per predicted second gets the
  // smallest factor (scale x predicted / CPU): base.
  double most = 0;
  for (size_t r = 0; r < pred.size() && r < cpu.size(); ++r)
    most = std::max(most, cpu[r] / pred[r]);
  return base * most;
}

PlanEmulation planEmulation(const std::string &spec) {
  PlanEmulation e;
  if (spec == "plan") {
    e.base = 3.0;
    return e;
  }
  bool isPlan = spec.rfind("plan:", 0) == 0,
       isScale = spec.rfind("scale:", 0) == 0;
  if (!isPlan && !isScale)
    return e;
  size_t at = isPlan ? 5 : 6;
  char *end = nullptr;
  double x = std::strtod(spec.c_str() + at, &end);
  if (spec.size() == at || *end || !std::isfinite(x) ||
      !(isPlan ? x >= 1 : x > 0))
    throw RuntimeError("--emulate-speed=" + spec +
                       (isPlan ? ": the base after 'plan:' must be a number "
                                 ">= 1 (e.g. --emulate-speed=plan:4)"
                               : ": the scale after 'scale:' must be a "
                                 "positive number (emulated seconds per "
                                 "predicted second, e.g. scale:1e3)"));
  (isPlan ? e.base : e.scale) = x;
  return e;
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

double emulateFor(double start, double want, double &debt) {
  double now = steadySeconds();
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

double emulateUntil(double start, double cpu, double factor, double &debt) {
  if (factor <= 1)
    return 0;
  return emulateFor(start, factor * cpu, debt);
}

double ActionClock::run(const plan::Action &a, double start, double waited) {
  if (!on(a))
    return 0;
  double slept =
      emulateFor(start, scale * a.predicted_seconds() + waited, debt);
  end = steadySeconds();
  return slept;
}

void ActionClock::settle(const plan::Action &a) {
  if (on(a))
    debt += std::max(0.0, steadySeconds() - end);
}

} // namespace frenzy::rt
