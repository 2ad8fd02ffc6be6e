//===- StatusPage.cpp - the status page's document -------------------------===//
//
// Everything comes from the database in one read transaction, so the
// page never shows a job both queued and running or a GPU held twice. The
// database records a job's GPUs per node ("node:count"), not which GPU of
// the node: the timeline gives each attempt, in start order, the node's
// lowest-numbered GPUs free at its start (always enough, since the service
// never over-allocates a node), so an attempt keeps one row from start to
// end. A running job's predicted finish is the predicted step time of its
// option (the one the policy predicts with: runningOption) times the steps
// left after its last complete checkpoint, counted from that checkpoint's
// time (from the attempt's start before the first).
//
//===----------------------------------------------------------------------===//
#include "StatusPage.h"

#include "Service.h"

#include "frenzy/Scheduler/Options.h"
#include "plan/CheckpointLatest.h"

#include "llvm/Support/FileSystem.h"

#include <pwd.h>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;
namespace json = llvm::json;

/// The user's login name, or the uid as text.
static std::string userName(int64_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid_t(uid), &pw, buf, sizeof buf, &found) == 0 && found)
    return found->pw_name;
  return std::to_string(uid);
}

/// "node/index" of each GPU, node by node.
static std::string gpuId(const SchedCluster &c, int node, int64_t index) {
  return c.nodes()[node].name + "/" + std::to_string(index);
}

double StatusPage::stepSeconds(JobStore &store, const std::string &key,
                               const std::string &layout, const Placement &p) {
  auto it = tables.find(key);
  if (it == tables.end()) {
    auto text = store.optionTable(key);
    if (!text || !*text) {
      if (!text)
        llvm::consumeError(text.takeError());
      return 0;
    }
    auto parsed = parseOptionTable(**text, "option table " + key, cluster);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return 0;
    }
    it = tables.emplace(key, std::move(*parsed)).first;
  }
  if (it->second.empty())
    return 0;
  // The job as the service's policy sees it: the table and the user
  // request made from it (the service's jobs keep JobSpec's defaults).
  SimJob job;
  job.options = &it->second;
  job.userOptions = userRequestOptions(JobSpec(), it->second, cluster);
  return runningOption(job, layout, p, cluster)->stepSeconds;
}

namespace {

/// The spans of one attempt laid onto concrete GPUs (see the banner).
struct GpuRows {
  explicit GpuRows(const SchedCluster &c) : c(c), busyUntil(c.nodes().size()) {
    for (size_t n = 0; n < c.nodes().size(); ++n)
      busyUntil[n].assign(size_t(c.nodes()[n].count), -1e300);
  }
  /// The GPU ids of `placement` at time `start` (busy until `end`, < 0:
  /// still running).
  std::vector<std::string> assign(const Placement &p, double start,
                                  double end) {
    std::vector<std::string> ids;
    for (const NodeGrant &g : p) {
      std::vector<double> &rows = busyUntil[size_t(g.node)];
      int64_t need = g.count;
      for (size_t i = 0; i < rows.size() && need > 0; ++i)
        if (rows[i] <= start) {
          rows[i] = end < 0 ? 1e300 : end;
          ids.push_back(gpuId(c, g.node, int64_t(i)));
          --need;
        }
    }
    return ids;
  }
  const SchedCluster &c;
  std::vector<std::vector<double>> busyUntil;
};

json::Value maybeTime(double t) {
  return t >= 0 ? json::Value(t) : json::Value(nullptr);
}

} // namespace

llvm::Expected<json::Object> StatusPage::snapshot(JobStore &store,
                                                  double now) {
  std::vector<JobRow> jobs;
  std::vector<AllocationRow> allocs;
  std::vector<AttemptSpan> spans;
  json::Array running, queue;
  std::vector<json::Object> finished;
  std::map<int64_t, std::vector<std::string>> gpusOf; // running job's GPUs
  json::Array timeline;
  double since = now - window;
  llvm::Error e = store.readTransaction([&]() -> llvm::Error {
    auto j = store.jobs();
    if (!j)
      return j.takeError();
    jobs = std::move(*j);
    auto a = store.allocations();
    if (!a)
      return a.takeError();
    allocs = std::move(*a);
    auto s = store.attemptSpans(since);
    if (!s)
      return s.takeError();
    spans = std::move(*s);
    return llvm::Error::success();
  });
  if (e)
    return std::move(e);

  GpuRows rows(cluster);
  for (const AttemptSpan &s : spans) {
    std::optional<Placement> p =
        parsePlacement(s.placement, cluster.nodes().size());
    if (!p)
      continue; // a placement of another cluster file
    std::vector<std::string> ids = rows.assign(*p, s.start, s.end);
    if (s.end < 0)
      gpusOf[s.job] = ids;
    for (const std::string &id : ids)
      timeline.push_back(json::Object{{"gpu", id},
                                      {"job", s.job},
                                      {"attempt", s.attempt},
                                      {"start", std::max(s.start, since)},
                                      {"end", maybeTime(s.end)},
                                      {"outcome", s.outcome}});
  }

  std::map<std::string, int64_t> counts;
  for (const char *st : {"queued", "running", "done", "failed", "cancelled"})
    counts[st] = 0;
  std::map<int64_t, const AllocationRow *> allocOf;
  for (const AllocationRow &a : allocs)
    allocOf[a.job] = &a;
  for (const JobRow &j : jobs) {
    ++counts[stateName(j.state)];
    json::Object r{{"id", j.id},
                   {"uid", j.uid},
                   {"user", userName(j.uid)},
                   {"state", stateName(j.state)},
                   {"steps", j.steps},
                   {"priority", j.priority},
                   {"attempts", j.attempts},
                   {"submitted", j.submitted}};
    if (j.deadline)
      r["deadline"] = *j.deadline;
    if (j.state == JobState::Queued) {
      r["position"] = int64_t(queue.size() + 1);
      queue.push_back(std::move(r));
      continue;
    }
    if (j.state != JobState::Running) {
      if (j.finished >= since) {
        r["finished"] = j.finished;
        finished.push_back(std::move(r));
      }
      continue;
    }
    auto it = allocOf.find(j.id);
    if (it == allocOf.end())
      continue; // cannot happen inside one snapshot (checkConsistency)
    const AllocationRow &a = *it->second;
    Placement p =
        parsePlacement(a.placement, cluster.nodes().size()).value_or(
            Placement{});
    json::Array nodes;
    for (const NodeGrant &g : p)
      nodes.push_back(cluster.nodes()[g.node].name + ":" +
                      std::to_string(g.count));
    json::Array gpus;
    for (const std::string &id : gpusOf[j.id])
      gpus.push_back(id);
    double step = p.empty() ? 0 : stepSeconds(store, j.optionsKey, a.option, p);
    // Progress is what the last complete checkpoint holds (the service
    // reads no training output); its manifest's time dates it.
    std::string ckpt = j.dir + "/ckpt";
    int64_t done = checkpoint::latestStep(ckpt);
    double from = a.started;
    llvm::sys::fs::file_status st;
    if (done > 0 &&
        !llvm::sys::fs::status(ckpt + "/step-" + std::to_string(done) +
                                   "/manifest",
                               st))
      from = std::max(from, double(llvm::sys::toTimeT(
                                st.getLastModificationTime())));
    r["attempt"] = a.attempt;
    r["started"] = a.started;
    r["layout"] = a.option;
    r["nodes"] = std::move(nodes);
    r["gpus"] = std::move(gpus);
    r["checkpoint_step"] = done;
    if (step > 0) {
      r["step_s"] = step;
      r["predicted_finish"] = from + double(j.steps - done) * step;
    } else {
      r["predicted_finish"] = nullptr;
    }
    running.push_back(std::move(r));
  }

  // The latest finished jobs only: the page stays small on a long queue.
  constexpr size_t kRecent = 50;
  json::Array recent;
  for (size_t i = finished.size() > kRecent ? finished.size() - kRecent : 0;
       i < finished.size(); ++i)
    recent.push_back(std::move(finished[i]));
  json::Array gpuList;
  for (size_t n = 0; n < cluster.nodes().size(); ++n) {
    const SchedNode &node = cluster.nodes()[n];
    for (int64_t i = 0; i < node.count; ++i)
      gpuList.push_back(
          json::Object{{"id", gpuId(cluster, int(n), i)},
                       {"node", node.name},
                       {"type", cluster.types()[size_t(node.type)].gpu.name}});
  }
  json::Object countsJson;
  for (auto &[k, v] : counts)
    countsJson[k] = v;
  return json::Object{{"cluster", cluster.spec().name},
                      {"now", now},
                      {"window_s", window},
                      {"counts", std::move(countsJson)},
                      {"gpus", std::move(gpuList)},
                      {"running", std::move(running)},
                      {"queue", std::move(queue)},
                      {"recent", std::move(recent)},
                      {"timeline", std::move(timeline)}};
}
