//===- SchedTestUtil.h - small clusters and hand-made jobs for tests -*- C++ -*-===//
#ifndef FRENZY_UNITTESTS_SCHEDULER_SCHEDTESTUTIL_H
#define FRENZY_UNITTESTS_SCHEDULER_SCHEDTESTUTIL_H

#include "frenzy/Scheduler/Simulator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace frenzy::sched::test {

/// Writes `text` to a fresh temporary file with `suffix`; returns its path.
inline std::string writeTemp(llvm::StringRef text, llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  int fd;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("sched", suffix, fd, path));
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text;
  return path.str().str();
}

inline SchedCluster clusterFrom(llvm::StringRef yaml) {
  auto spec = readClusterFile(writeTemp(yaml, "yaml"));
  EXPECT_TRUE(bool(spec)) << (spec ? "" : llvm::toString(spec.takeError()));
  auto c = SchedCluster::build(*spec);
  EXPECT_TRUE(bool(c));
  return std::move(*c);
}

/// One option: `count` GPUs of type 0 at `step` seconds per step.
inline JobOption option(int64_t count, double step, int type = 0) {
  JobOption o;
  o.gpus = {{type, count, 1}};
  o.stepSeconds = step;
  o.layout = std::to_string(count) + " GPUs";
  return o;
}

/// Jobs with hand-made option tables (the simulator needs nothing else).
struct HandJobs {
  std::vector<JobSpec> specs;
  std::vector<std::vector<JobOption>> tables;
  void add(const std::string &name, double arrival, int64_t steps,
           std::vector<JobOption> options, int64_t userGpus = 1) {
    JobSpec j;
    j.name = name;
    j.arrival = arrival;
    j.steps = steps;
    j.userGpus = userGpus;
    specs.push_back(j);
    tables.push_back(std::move(options));
  }
  std::vector<SimJob> build(const SchedCluster &c) {
    std::vector<SimJob> jobs(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      jobs[i].spec = &specs[i];
      jobs[i].options = &tables[i];
      jobs[i].userOptions = userRequestOptions(specs[i], tables[i], c);
    }
    return jobs;
  }
};

inline SimResult run(const SchedCluster &c, std::vector<SimJob> jobs,
                     llvm::StringRef policy, double restart = 30) {
  auto p = makePolicy(policy);
  EXPECT_TRUE(p);
  SimConfig cfg;
  cfg.restartSeconds = restart;
  auto r = simulate(c, std::move(jobs), *p, cfg);
  EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
  return std::move(*r);
}

constexpr const char *kOneNode = "nodes:\n"
                                 "  - {name: n0, gpu: A100-80G, count: 4}\n";

} // namespace frenzy::sched::test

#endif
