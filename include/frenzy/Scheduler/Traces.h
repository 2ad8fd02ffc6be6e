//===- Traces.h - job queues: the YAML file, Philly, synthetic ---*- C++ -*-===//
#ifndef FRENZY_SCHEDULER_TRACES_H
#define FRENZY_SCHEDULER_TRACES_H

#include "frenzy/Scheduler/Job.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace frenzy::sched {

/// The job queue file (docs/scheduler.md). Errors name the file, the line
/// and the field. Jobs keep their file:line in JobSpec::where.
llvm::Expected<std::vector<JobSpec>> readJobQueue(llvm::StringRef path);
void writeJobQueue(const std::vector<JobSpec> &jobs, llvm::raw_ostream &os);

/// The transformer sizes trace jobs are mapped to, smallest first.
struct ModelClass {
  ModelDesc model;
  int64_t globalBatch, seq;
  double maxGpuHours; // Philly jobs up to this many GPU-hours map here
};
const std::vector<ModelClass> &traceModelClasses();

struct PhillyOptions {
  std::string start;      // "YYYY-MM-DD HH:MM:SS": first submission taken
  size_t maxJobs = 500;
  double arrivalScale = 1;  // arrival gaps multiplied by this
  double maxJobHours = 24;  // longer jobs are cut to this
};

/// Philly-derived CSV (timestamp,duration,num_gpus,gpu_time,cluster): the
/// first maxJobs submissions at or after `start`, arrivals relative to the
/// first. A job's model comes from its GPU-hours (traceModelClasses); its
/// length is JobSpec::referenceSeconds (converted to steps once options are
/// known: see stepsFromReference). Errors: file:line: field: what.
llvm::Expected<std::vector<JobSpec>> readPhillyTrace(llvm::StringRef path,
                                                     const PhillyOptions &o);

struct SyntheticOptions {
  uint64_t seed = 1;
  size_t jobs = 500;
  double jobsPerHour = 30; // Poisson arrivals
};
/// Seeded and platform-independent (its own generator and transforms).
std::vector<JobSpec> syntheticTrace(const SyntheticOptions &o);

} // namespace frenzy::sched

#endif
