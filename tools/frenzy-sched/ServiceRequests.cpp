//===- ServiceRequests.cpp - submit, status, cancel, logs -----------------===//
//
// Each request is answered from the database; the caller's uid comes from
// the socket (SO_PEERCRED), so a user sees and cancels only their own jobs
// (root all). A submission's files arrive as descriptors the client opened
// and are copied into the job's directory (0700, owned by the user): the
// service never opens a path a user names, and a job never reads files
// that change after its submission. A refused submission leaves nothing
// behind: its directory is removed and no row is written.
//
//===----------------------------------------------------------------------===//
#include "Service.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <fcntl.h>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;
namespace json = llvm::json;

static json::Object refuse(const llvm::Twine &why) {
  return json::Object{{"ok", false}, {"error", why.str()}};
}

/// Copies the open file `fd` to `path` (mode 0600); the SHA-256 of what
/// was copied goes to `hash` when given.
static llvm::Error copyFd(int fd, const std::string &path,
                          llvm::SHA256 *hash) {
  int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                   0600);
  if (out < 0)
    return llvm::createStringError(std::errc::io_error, "%s: cannot create",
                                   path.c_str());
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {
    if (hash)
      hash->update(llvm::ArrayRef<uint8_t>(
          reinterpret_cast<const uint8_t *>(buf), size_t(n)));
    if (::write(out, buf, size_t(n)) != n) {
      ::close(out);
      return llvm::createStringError(std::errc::io_error,
                                     "%s: cannot write (disk full?)",
                                     path.c_str());
    }
  }
  ::close(out);
  if (n < 0)
    return llvm::createStringError(std::errc::io_error,
                                   "cannot read a submitted file (is it a "
                                   "directory?)");
  return llvm::Error::success();
}

/// The last non-empty line of a file (a tool's one error line).
static std::string lastLine(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return "";
  llvm::StringRef t = (*buf)->getBuffer().rtrim();
  return t.substr(t.rfind('\n') + 1).str();
}

json::Object Service::submit(const json::Object &req, unsigned uid,
                             std::vector<int> &fds, double now) {
  std::optional<int64_t> steps = req.getInteger("steps");
  int64_t gb = req.getInteger("global_batch").value_or(8);
  int64_t seq = req.getInteger("seq").value_or(64);
  std::optional<double> deadline = req.getNumber("deadline");
  bool hasData = req.getBoolean("data").value_or(false);
  if (!steps || *steps <= 0 || gb <= 0 || seq <= 0)
    return refuse("--steps, --global-batch and --seq must be positive");
  if (deadline && *deadline <= now)
    return refuse(llvm::formatv("the deadline {0:f0} is in the past (now "
                                "{1:f0}, seconds since the epoch); give a "
                                "later --deadline",
                                *deadline, now));
  if (fds.size() != (hasData ? 2u : 1u))
    return refuse("a submission sends the model (and the data) as open "
                  "files; use frenzy-sched submit");
  if (::geteuid() != 0 && uid != ::geteuid())
    return refuse("this service runs as uid " + llvm::Twine(::geteuid()) +
                  " and cannot run jobs as uid " + llvm::Twine(uid) +
                  "; run it as root to serve several users");
  // A fresh directory per submission, named before the job has an id:
  // one a killed service leaves unreferenced is swept at the next start.
  std::string dir = o.stateDir + "/jobs/" +
                    llvm::formatv("{0:x-}-{1}", uint64_t(now * 1e9), uid).str();
  if (std::error_code ec = llvm::sys::fs::create_directory(
          dir, /*IgnoreExisting=*/false, llvm::sys::fs::perms(0700)))
    return refuse(dir + ": cannot create: " + ec.message());
  auto fail = [&](const llvm::Twine &why) {
    llvm::sys::fs::remove_directories(dir);
    return refuse(why);
  };
  llvm::SHA256 hash;
  JobRow j;
  j.uid = uid;
  j.model = dir + "/model.onnx";
  j.data = hasData ? dir + "/data.tokens" : "";
  if (llvm::Error e = copyFd(fds[0], j.model, &hash))
    return fail(llvm::toString(std::move(e)));
  if (hasData)
    if (llvm::Error e = copyFd(fds[1], j.data, nullptr))
      return fail(llvm::toString(std::move(e)));
  std::array<uint8_t, 32> digest = hash.final();
  j.optionsKey = llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(8),
                             /*LowerCase=*/true) +
                 "-b" + std::to_string(gb) + "-s" + std::to_string(seq);
  j.steps = *steps;
  j.globalBatch = gb;
  j.seq = seq;
  j.deadline = deadline;
  j.priority = req.getInteger("priority").value_or(0);
  j.dir = dir;
  j.submitted = now;
  // The option table once per (model, batch, seq): frenzy-opt's memory
  // model and partitioner on the service's cluster. A malformed model
  // fails here, in frenzy-opt's own words.
  auto table = store->optionTable(j.optionsKey);
  if (!table)
    return fail(llvm::toString(table.takeError()));
  if (!*table) {
    std::string out = dir + "/options.txt", err = dir + "/submit.err";
    std::string cl = "--cluster=" + o.clusterFile;
    std::string gbArg = "--global-batch=" + std::to_string(gb);
    std::string seqArg = "--seq=" + std::to_string(seq);
    llvm::SmallVector<llvm::StringRef> args = {
        o.frenzyOpt, j.model, cl, gbArg, seqArg, "--emit=job-options",
        "-o", out};
    std::optional<llvm::StringRef> redirects[] = {
        llvm::StringRef(""), llvm::StringRef(err), llvm::StringRef(err)};
    std::string msg;
    int rc = llvm::sys::ExecuteAndWait(o.frenzyOpt, args, std::nullopt,
                                       redirects, unsigned(o.planTimeoutS), 0,
                                       &msg);
    if (rc != 0) {
      // Named as the user named it, not by the service's copy.
      std::string why = lastLine(err);
      std::string name = req.getString("name").value_or("the model").str();
      for (size_t at; (at = why.find(j.model)) != std::string::npos;)
        why.replace(at, j.model.size(), name);
      return fail("the model was refused: " +
                  (why.empty() ? msg : why) +
                  (rc == -2 ? " (frenzy-opt passed --plan-timeout)" : ""));
    }
    auto text = llvm::MemoryBuffer::getFile(out);
    if (!text)
      return fail(out + ": frenzy-opt wrote no option table");
    if (llvm::Error e = store->putOptionTable(j.optionsKey,
                                              (*text)->getBuffer()))
      return fail(llvm::toString(std::move(e)));
  }
  auto opts = options(j.optionsKey, j);
  if (!opts)
    return fail(llvm::toString(opts.takeError()));
  if ((*opts)->empty())
    return fail(llvm::formatv(
        "the model fits on no GPU of cluster '{0}' at global batch {1}, seq "
        "{2} (frenzy-opt found no layout whose ranks hold it); use a "
        "smaller batch or model",
        cluster.spec().name, gb, seq));
  if (::geteuid() == 0)
    for (const std::string &p : {dir, j.model, j.data})
      if (!p.empty() && ::chown(p.c_str(), uid_t(uid), gid_t(-1)) != 0)
        return fail(p + ": cannot give it to uid " + llvm::Twine(uid));
  if (llvm::Error e = store->addJob(j))
    return fail(llvm::toString(std::move(e)));
  dirty = true;
  return json::Object{{"ok", true}, {"job", j.id}};
}

llvm::Expected<JobRow> Service::ownJob(const json::Object &req,
                                       unsigned uid) {
  std::optional<int64_t> id = req.getInteger("job");
  if (!id)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "give a job id");
  auto row = store->job(*id);
  if (!row)
    return row.takeError();
  if (!*row)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "no job %lld", (long long)*id);
  if (uid != 0 && (*row)->uid != int64_t(uid))
    return llvm::createStringError(
        std::errc::permission_denied,
        "job %lld belongs to another user; you may see and cancel only "
        "your own jobs",
        (long long)*id);
  return **row;
}

json::Object Service::status(const json::Object &req, unsigned uid) {
  std::vector<JobRow> rows;
  if (req.getInteger("job")) {
    auto j = ownJob(req, uid);
    if (!j)
      return refuse(llvm::toString(j.takeError()));
    rows.push_back(*j);
  } else {
    auto all = store->jobs(uid == 0 ? std::nullopt
                                    : std::optional<int64_t>(uid));
    if (!all)
      return refuse(llvm::toString(all.takeError()));
    rows = std::move(*all);
  }
  json::Array out;
  for (const JobRow &j : rows) {
    json::Object r{{"id", j.id},
                   {"uid", j.uid},
                   {"state", stateName(j.state)},
                   {"attempts", j.attempts},
                   {"steps", j.steps},
                   {"priority", j.priority},
                   {"submitted", j.submitted},
                   {"reason", j.reason},
                   {"dir", j.dir}};
    if (j.deadline)
      r["deadline"] = *j.deadline;
    if (j.started >= 0)
      r["started"] = j.started;
    if (j.finished >= 0)
      r["finished"] = j.finished;
    auto a = store->allocation(j.id);
    if (!a)
      return refuse(llvm::toString(a.takeError()));
    if (*a) {
      std::string nodes;
      if (auto p = parsePlacement((*a)->placement, cluster.nodes().size()))
        for (const NodeGrant &g : *p)
          nodes += (nodes.empty() ? "" : ",") +
                   cluster.nodes()[g.node].name + ":" +
                   std::to_string(g.count);
      r["nodes"] = nodes;
      r["layout"] = (*a)->option;
      r["handle"] = (*a)->handle;
    }
    out.push_back(std::move(r));
  }
  return json::Object{{"ok", true}, {"jobs", std::move(out)}};
}

json::Object Service::cancel(const json::Object &req, unsigned uid,
                             double now) {
  auto j = ownJob(req, uid);
  if (!j)
    return refuse(llvm::toString(j.takeError()));
  std::string why = "cancelled by uid " + std::to_string(uid);
  llvm::Error e = llvm::Error::success();
  if (j->state == JobState::Queued) {
    e = store->endQueued(j->id, JobState::Cancelled, why, now);
  } else if (j->state == JobState::Running) {
    auto a = store->allocation(j->id);
    if (!a)
      return refuse(llvm::toString(a.takeError()));
    if (*a && !(*a)->handle.empty())
      backend->stop((*a)->handle);
    e = store->endAttempt(j->id, JobState::Cancelled, why, now);
  } else {
    return refuse("job " + llvm::Twine(j->id) + " is already " +
                  stateName(j->state));
  }
  if (e)
    return refuse(llvm::toString(std::move(e)));
  dirty = true;
  return json::Object{{"ok", true}, {"job", j->id}};
}

json::Object Service::logs(const json::Object &req, unsigned uid) {
  auto j = ownJob(req, uid);
  if (!j)
    return refuse(llvm::toString(j.takeError()));
  auto buf = llvm::MemoryBuffer::getFile(j->dir + "/log");
  // No log yet: the job has not started.
  return json::Object{{"ok", true},
                      {"log", buf ? (*buf)->getBuffer().str() : ""}};
}

json::Object Service::handle(const json::Object &req, unsigned uid,
                             std::vector<int> &fds, double now) {
  std::optional<llvm::StringRef> op = req.getString("op");
  if (op == "submit")
    return submit(req, uid, fds, now);
  if (op == "status")
    return status(req, uid);
  if (op == "cancel")
    return cancel(req, uid, now);
  if (op == "logs")
    return logs(req, uid);
  if (op == "page")
    return page(now);
  return refuse("unknown request '" + op.value_or("") +
                "'; valid: submit, status, cancel, logs, page");
}
