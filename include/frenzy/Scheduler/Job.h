//===- Job.h - jobs, their options and the plain-data option tables -*- C++ -*-===//
//
// The scheduler's core sees a job only through plain data: its work (steps
// of a fixed global batch) and a table of options, each a GPU mix (type ->
// count), a layout and a predicted step time. Where the table comes from
// (the analytic estimator for a model summary, or a table frenzy-opt wrote
// from the memory model and the partitioner) is invisible here, which keeps
// the simulator and the policies free of MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SCHEDULER_JOB_H
#define FRENZY_SCHEDULER_JOB_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace frenzy::sched {

/// A transformer described by its sizes (the job file's `model:` mapping),
/// for jobs without an ONNX file.
struct ModelDesc {
  std::string name;
  int64_t params = 0; // 0: derived from the sizes below
  int64_t layers = 0, hidden = 0, heads = 0, vocab = 0;
  int64_t totalParams() const;
};

/// GPUs of one type inside an option.
struct TypeCount {
  int type = 0;      // index into the scheduler's cluster types
  int64_t count = 0;
  int64_t group = 1; // GPUs that must share a node (the part's TP degree)
};

struct JobOption {
  std::vector<TypeCount> gpus; // one entry per type used, sorted by type
  int64_t tp = 1, pp = 1, dp = 1; // of the first part, for reports
  double stepSeconds = 0;         // predicted seconds per global-batch step
  int64_t peakBytes = 0;          // the fullest rank's predicted peak
  std::string layout;             // human description
  int64_t totalGpus() const;
  int64_t countOf(int type) const;
  bool mixed() const { return gpus.size() > 1; }
};

struct JobSpec {
  std::string name;
  ModelDesc model;          // when no ONNX file
  std::string onnx;         // an ONNX model (options then come from a table)
  std::string optionsFile;  // a table written by `frenzy-opt --job-options`
  std::string data;         // token file the job trains on (frenzy-launch --data)
  int64_t globalBatch = 0, seq = 0;
  int64_t steps = 0;
  /// Trace jobs: how long the job ran on its user request on the slowest
  /// GPU type that runs it; steps are derived from it (stepsFromReference).
  double referenceSeconds = 0;
  double arrival = 0;
  std::optional<double> deadline;
  int priority = 0;
  int64_t userGpus = 1;     // the fixed request of the FIFO baseline
  std::string userGpuType;  // optional: the type that request names
  std::string where;        // file:line of the job, for messages
  /// The key option tables are cached under: same model, batch and seq
  /// share one table.
  std::string modelKey() const;
};

} // namespace frenzy::sched

#endif
