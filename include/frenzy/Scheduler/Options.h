//===- Options.h - where a job's option table comes from --------*- C++ -*-===//
//
// The one interface between planning and scheduling: given a job, the
// feasible (GPU mix, count, layout) options with predicted step times. Two
// sources: the analytic estimator (a model summary: sizes only) and option
// tables frenzy-opt writes from the memory model and the partitioner
// (`frenzy-opt model.onnx --cluster=C.yaml --job-options -o T`). Tables are
// cached per model key, so a scheduling decision only looks them up.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SCHEDULER_OPTIONS_H
#define FRENZY_SCHEDULER_OPTIONS_H

#include "frenzy/Scheduler/SchedCluster.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>

namespace frenzy::sched {

/// Documented defaults of the analytic estimator (docs/scheduler.md).
struct AnalyticParams {
  double matmulEfficiency = 0.45; // share of peak a whole training step reaches
  double networkEfficiency = 0.8;
  double reserveShare = 0.05;     // allocator slack, share of memory
  int64_t maxMixedPerType = 32;   // mixed options use up to this many per type
};

/// Options of a model given by its sizes: memory per rank and step time from
/// closed forms (Adam mixed precision, selective recomputation, 1F1B), per
/// GPU type every count in {1, 2, 4, ...} and every multiple of the node
/// size, the best layout per (type, count); plus two-type mixes of
/// data-parallel replicas.
std::vector<JobOption> analyticOptions(const ModelDesc &m, int64_t globalBatch,
                                       int64_t seq, const SchedCluster &c,
                                       const AnalyticParams &p = {});

/// The text table: one option per line, `key=value` fields (docs).
void writeOptionTable(const std::vector<JobOption> &options,
                      const SchedCluster &c, llvm::StringRef header,
                      llvm::raw_ostream &os);
/// Errors name the file, the line and the field.
llvm::Expected<std::vector<JobOption>>
readOptionTable(llvm::StringRef path, const SchedCluster &c);
/// The same from text already read (`path` names it in errors).
llvm::Expected<std::vector<JobOption>>
parseOptionTable(llvm::StringRef text, llvm::StringRef path,
                 const SchedCluster &c);

/// Options per job, computed once per model key.
class OptionCache {
public:
  OptionCache(const SchedCluster &c, AnalyticParams p = {})
      : cluster(c), params(p) {}
  /// The job's options; an error when it fits on no GPU type (the reason
  /// names the smallest need and the largest GPU).
  llvm::Expected<const std::vector<JobOption> *> get(const JobSpec &job);
  size_t tablesBuilt() const { return tables.size(); }

private:
  const SchedCluster &cluster;
  AnalyticParams params;
  std::map<std::string, std::vector<JobOption>> tables;
};

} // namespace frenzy::sched

#endif
