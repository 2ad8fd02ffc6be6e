//===- StatusPage.h - the service's status page: data and HTML --*- C++ -*-===//
//
// One JSON document describes the page (GET /status.json, `frenzy-sched
// status --page`): the queue, the running jobs with their GPUs and
// predicted finish, and per-GPU spans of the last hours; the HTML page
// (GET /) is drawn from the same document. It shows every user's jobs but
// no paths, logs or failure reasons: those stay with `status`, which
// answers each user for their own jobs only.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_STATUSPAGE_H
#define FRENZY_TOOLS_FRENZY_SCHED_STATUSPAGE_H

#include "frenzy/Scheduler/SchedCluster.h"
#include "frenzy/Service/JobStore.h"

#include "llvm/Support/JSON.h"

#include <map>

namespace frenzy::sched {

class StatusPage {
public:
  /// `windowSeconds`: how far back the timeline reaches.
  StatusPage(const SchedCluster &cluster, double windowSeconds)
      : cluster(cluster), window(windowSeconds) {}
  /// The document, read from `store` in one snapshot (a read transaction:
  /// the queue, allocations and events agree with each other).
  llvm::Expected<llvm::json::Object> snapshot(service::JobStore &store,
                                              double now);

private:
  /// Predicted seconds per step of the option a job runs with `layout` on
  /// `p`, from the table `key` (0 when unknown). A key names one (model,
  /// batch, seq) and its table never changes, so each is parsed once.
  double stepSeconds(service::JobStore &store, const std::string &key,
                     const std::string &layout, const Placement &p);
  const SchedCluster &cluster;
  double window;
  std::map<std::string, std::vector<JobOption>> tables;
};

/// The HTML page of a snapshot: tables and an inline SVG timeline, no
/// scripts, no external resources.
std::string renderStatusHtml(const llvm::json::Object &snapshot);

} // namespace frenzy::sched

#endif
