//===- SyntheticTrace.cpp - a seeded synthetic job queue ------------------===//
//
// Poisson arrivals at `jobsPerHour`; each job's model drawn from the trace
// model classes with weights 30/25/20/12/8/5 % (small jobs dominate, as in
// every published cluster trace); its user request 1/2/4/8/16 GPUs with
// weights 30/20/25/20/5 %, at least 4 for models above 1.3B parameters; its
// length log-uniform between 20 minutes and 8 hours on that request on the
// slowest GPU type that runs it (reference seconds, as for Philly jobs).
// The generator is splitmix64 and the transforms are written out, so a
// seed gives the same queue on every platform and standard library.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Traces.h"

#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

namespace {
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1).
  double uniform() { return (double(next() >> 11) + 0.5) / 9007199254740992.0; }
  size_t pick(std::initializer_list<double> weights) {
    double u = uniform(), acc = 0;
    size_t i = 0;
    for (double w : weights) {
      acc += w;
      if (u < acc)
        return i;
      ++i;
    }
    return weights.size() - 1;
  }
};
} // namespace

std::vector<JobSpec> frenzy::sched::syntheticTrace(const SyntheticOptions &o) {
  SplitMix64 rng{o.seed};
  std::vector<JobSpec> jobs;
  double t = 0;
  const auto &classes = traceModelClasses();
  for (size_t i = 0; i < o.jobs; ++i) {
    if (i)
      t += -std::log(rng.uniform()) * 3600.0 / o.jobsPerHour;
    const ModelClass &mc =
        classes[rng.pick({0.30, 0.25, 0.20, 0.12, 0.08, 0.05})];
    static const int64_t request[] = {1, 2, 4, 8, 16};
    int64_t gpus = request[rng.pick({0.30, 0.20, 0.25, 0.20, 0.05})];
    if (mc.model.totalParams() > 1500000000ll)
      gpus = std::max<int64_t>(gpus, 4);
    JobSpec j;
    j.name = "syn-" + std::to_string(i);
    j.model = mc.model;
    j.globalBatch = mc.globalBatch;
    j.seq = mc.seq;
    j.arrival = std::round(t);
    double lo = std::log(1200.0), hi = std::log(8 * 3600.0);
    j.referenceSeconds = std::round(std::exp(lo + (hi - lo) * rng.uniform()));
    j.userGpus = gpus;
    j.where = "synthetic job " + std::to_string(i);
    jobs.push_back(std::move(j));
  }
  return jobs;
}
