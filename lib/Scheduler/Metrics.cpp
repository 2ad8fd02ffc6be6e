//===- Metrics.cpp - summary figures of one simulated run -----------------===//
#include "frenzy/Scheduler/Metrics.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

double frenzy::sched::quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t rank = size_t(std::ceil(q * double(v.size())));
  return v[std::min(v.size() - 1, rank ? rank - 1 : 0)];
}

static double mean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / double(v.size());
}

Metrics frenzy::sched::computeMetrics(const SimResult &r) {
  Metrics m;
  std::vector<double> jct, queue;
  double first = INFINITY, last = 0;
  for (const JobResult &j : r.jobs) {
    if (j.finish < 0)
      continue;
    jct.push_back(j.finish - j.arrival);
    queue.push_back(j.start - j.arrival);
    first = std::min(first, j.arrival);
    last = std::max(last, j.finish);
    m.restarts += j.restarts;
  }
  m.jobs = jct.size();
  m.avgJct = mean(jct);
  m.p50Jct = quantile(jct, 0.5);
  m.p95Jct = quantile(jct, 0.95);
  m.p99Jct = quantile(jct, 0.99);
  m.avgQueue = mean(queue);
  m.p95Queue = quantile(queue, 0.95);
  m.makespan = m.jobs ? last - first : 0;
  m.utilisation = m.makespan > 0 && r.totalGpus
                      ? r.busyGpuSeconds / (double(r.totalGpus) * m.makespan)
                      : 0;
  m.decisions = r.decisionSeconds.size();
  m.decisionMedian = quantile(r.decisionSeconds, 0.5);
  m.decisionP99 = quantile(r.decisionSeconds, 0.99);
  m.decisionMean = mean(r.decisionSeconds);
  return m;
}

void frenzy::sched::printJobTable(const SimResult &r, llvm::raw_ostream &os) {
  os << "job\tarrival_s\tstart_s\tfinish_s\tjct_s\tgpus\trestarts\tnodes\t"
        "layout\n";
  for (const JobResult &j : r.jobs)
    os << llvm::formatv("{0}\t{1:f1}\t{2:f1}\t{3:f1}\t{4:f1}\t{5}\t{6}\t{7}\t"
                        "{8}\n",
                        j.name, j.arrival, j.start, j.finish,
                        j.finish - j.arrival, j.gpus, j.restarts, j.nodes,
                        j.layout);
}

void frenzy::sched::printMetrics(const Metrics &m, llvm::StringRef policy,
                                 llvm::raw_ostream &os) {
  os << llvm::formatv(
      "policy={0} jobs={1} avg_jct_s={2:f1} p50_jct_s={3:f1} "
      "p95_jct_s={4:f1} p99_jct_s={5:f1} makespan_s={6:f1} "
      "utilisation={7:f3} avg_queue_s={8:f1} restarts={9} decisions={10} "
      "decision_median_ms={11:f3} decision_p99_ms={12:f3}\n",
      policy, m.jobs, m.avgJct, m.p50Jct, m.p95Jct, m.p99Jct, m.makespan,
      m.utilisation, m.avgQueue, m.restarts, m.decisions,
      m.decisionMedian * 1e3, m.decisionP99 * 1e3);
}
