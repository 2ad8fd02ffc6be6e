//===- ServiceResize.cpp - serve: moving a running job --------------------===//
//
// A running job the policy grows, shrinks, moves or stops is never killed:
// the service writes its attempt's stop file (frenzy-launch --stop-file,
// looked for after every checkpoint), with the target option and GPUs in
// it. The job stops after its next checkpoint and exits 0; reconcile()
// then sees the stop file, requeues the job ("resized: ...", not counted
// as a failed attempt) and starts it on the target when those GPUs are
// free, resuming from that checkpoint (a new plan for the new GPUs). The
// stop file is the only record of a resize in flight, so a service killed
// at any point finishes it after its restart.
//
//===----------------------------------------------------------------------===//
#include "Service.h"

#include "plan/CheckpointLatest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fstream>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;

static constexpr const char *kResized = "resized: ";

std::string Service::stopFile(const JobRow &j, int64_t attempt) {
  return j.dir + "/attempt-" + std::to_string(attempt) + "/stop";
}

bool Service::resizePending(const JobRow &j, const AllocationRow &a) {
  return llvm::sys::fs::exists(stopFile(j, a.attempt));
}

llvm::Error Service::requestResize(const JobRow &j, const AllocationRow &a,
                                   const JobOption *to, const Placement &where,
                                   double now) {
  std::string path = stopFile(j, a.attempt);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (to)
      out << to->layout << "\n" << placementText(where) << "\n";
    if (!out)
      return llvm::createStringError(std::errc::io_error,
                                     "%s: cannot write the stop file",
                                     tmp.c_str());
  }
  // Renamed into place: frenzy-launch sees a whole file or none.
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return llvm::createStringError(ec, "%s: %s", path.c_str(),
                                   ec.message().c_str());
  std::string what = to ? "to " + to->layout + " on nodes " +
                              placementText(where)
                        : std::string("to wait (stopped for other jobs)");
  return store->addEvent(j.id, "resize",
                         "from " + a.option + " on nodes " + a.placement +
                             " " + what + ", after its next checkpoint",
                         now);
}

/// The log's last word on the attempt: "done: ..." (it finished) or
/// "stopped after the checkpoint of step N ..." (it obeyed the stop file).
static bool stoppedEarly(const std::string &log) {
  auto buf = llvm::MemoryBuffer::getFile(log);
  if (!buf)
    return false;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->starts_with("done:"))
      return false;
    if (it->starts_with("stopped after the checkpoint of step"))
      return true;
  }
  return false;
}

llvm::Expected<bool> Service::finishResize(const JobRow &j,
                                           const AllocationRow &a,
                                           double now) {
  std::string path = stopFile(j, a.attempt);
  if (!llvm::sys::fs::exists(path) || !stoppedEarly(j.dir + "/log"))
    return false;
  int64_t step = checkpoint::latestStep(j.dir + "/ckpt");
  std::string layout, nodes;
  {
    std::ifstream in(path);
    std::getline(in, layout);
    std::getline(in, nodes);
  }
  std::string why = std::string(kResized) + "attempt " +
                    std::to_string(a.attempt) +
                    " stopped after the checkpoint of step " +
                    std::to_string(step);
  if (llvm::Error e = store->endAttempt(j.id, JobState::Queued, why, now))
    return std::move(e);
  dirty = true;
  if (layout.empty())
    return true; // stopped to wait: the policy places it again
  // Straight onto the target when its GPUs are free (other allocations
  // may have changed since it was chosen); else the policy decides anew.
  std::optional<Placement> target =
      parsePlacement(nodes, cluster.nodes().size());
  auto opts = options(j.optionsKey, j);
  if (!opts)
    return opts.takeError();
  const JobOption *opt = nullptr;
  for (const JobOption &o : **opts)
    if (o.layout == layout)
      opt = &o;
  auto allocs = store->allocations();
  if (!allocs)
    return allocs.takeError();
  SchedCluster busy = cluster;
  for (const AllocationRow &other : *allocs)
    if (std::optional<Placement> p =
            parsePlacement(other.placement, cluster.nodes().size()))
      busy.take(*p);
  if (!opt || !target || !busy.take(*target))
    return true;
  auto row = store->job(j.id);
  if (!row)
    return row.takeError();
  if (llvm::Error e = launch(**row, *opt, *target, now))
    return std::move(e);
  return true;
}

llvm::Expected<int> Service::failedAttempts(const JobRow &j) {
  auto events = store->events(j.id);
  if (!events)
    return events.takeError();
  int resized = 0;
  for (const EventRow &e : *events)
    if (e.kind == "requeued" && llvm::StringRef(e.detail).starts_with(kResized))
      ++resized;
  return int(j.attempts) - resized;
}

const JobOption *Service::placedOnOf(const JobRow &j,
                                     const std::vector<JobOption> &opts) {
  auto events = store->events(j.id);
  if (!events)
  if (!events) {
    llvm::consumeError(events.takeError()); // no way back: it stays put
    return nullptr;
  }
  for (auto it = events->rbegin(); it != events->rend(); ++it)
    if (it->kind == "placed-on") {
      for (const JobOption &o : opts)
        if (o.layout == it->detail)
          return &o;
      return nullptr;
    }
  return nullptr;
}
