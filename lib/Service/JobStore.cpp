//===- JobStore.cpp - the scheduler service's queue in SQLite -------------===//
//
// Plain SQL through prepared statements. Writes take the write lock up
// front (BEGIN IMMEDIATE) so a transaction never fails half-way on a lock
// upgrade; a state change checks the row's current state inside the same
// transaction, so two changes of one job cannot interleave.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Service/JobStore.h"

#include "llvm/ADT/StringExtras.h"

#include <sqlite3.h>

using namespace frenzy::service;

namespace {

constexpr int kSchemaVersion = 1;

const char *kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uid INTEGER NOT NULL,
  model TEXT NOT NULL, data TEXT NOT NULL, options_key TEXT NOT NULL,
  steps INTEGER NOT NULL CHECK(steps > 0),
  global_batch INTEGER NOT NULL, seq INTEGER NOT NULL,
  deadline REAL, priority INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK(state IN
    ('queued','running','done','failed','cancelled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  dir TEXT NOT NULL DEFAULT '',
  submitted REAL NOT NULL, started REAL, finished REAL);
CREATE TABLE IF NOT EXISTS option_tables(
  key TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS allocations(
  job INTEGER PRIMARY KEY REFERENCES jobs(id),
  attempt INTEGER NOT NULL, placement TEXT NOT NULL, option TEXT NOT NULL,
  handle TEXT NOT NULL DEFAULT '', started REAL NOT NULL);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job INTEGER NOT NULL REFERENCES jobs(id),
  time REAL NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_job ON events(job);
)sql";

/// A prepared statement; binds by position, steps, finalizes on scope exit.
class Stmt {
public:
  Stmt(sqlite3 *db, const char *sql) : db(db) {
    rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
  }
  ~Stmt() { sqlite3_finalize(s); }
  bool ok() const { return rc == SQLITE_OK; }
  Stmt &bind(int i, int64_t v) {
    sqlite3_bind_int64(s, i, v);
    return *this;
  }
  Stmt &bind(int i, double v) {
    sqlite3_bind_double(s, i, v);
    return *this;
  }
  Stmt &bind(int i, llvm::StringRef v) {
    sqlite3_bind_text(s, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt &bindOpt(int i, std::optional<double> v) {
    if (v)
      return bind(i, *v);
    sqlite3_bind_null(s, i);
    return *this;
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return rc = sqlite3_step(s); }
  int64_t i64(int c) { return sqlite3_column_int64(s, c); }
  double real(int c) { return sqlite3_column_double(s, c); }
  bool null(int c) { return sqlite3_column_type(s, c) == SQLITE_NULL; }
  std::string text(int c) {
    const unsigned char *t = sqlite3_column_text(s, c);
    return t ? std::string(reinterpret_cast<const char *>(t)) : "";
  }

private:
  sqlite3 *db;
  sqlite3_stmt *s = nullptr;
  int rc;
};

const char *kJobColumns =
    "id, uid, model, data, options_key, steps, global_batch, seq, deadline, "
    "priority, state, attempts, reason, dir, submitted, started, finished";

JobRow readJob(Stmt &s) {
  JobRow j;
  j.id = s.i64(0);
  j.uid = s.i64(1);
  j.model = s.text(2);
  j.data = s.text(3);
  j.optionsKey = s.text(4);
  j.steps = s.i64(5);
  j.globalBatch = s.i64(6);
  j.seq = s.i64(7);
  if (!s.null(8))
    j.deadline = s.real(8);
  j.priority = s.i64(9);
  j.state = parseState(s.text(10)).value_or(JobState::Failed);
  j.attempts = s.i64(11);
  j.reason = s.text(12);
  j.dir = s.text(13);
  j.submitted = s.real(14);
  j.started = s.null(15) ? -1 : s.real(15);
  j.finished = s.null(16) ? -1 : s.real(16);
  return j;
}

AllocationRow readAllocation(Stmt &s) {
  return {s.i64(0), s.i64(1), s.text(2), s.text(3), s.text(4), s.real(5)};
}

} // namespace

const char *frenzy::service::stateName(JobState s) {
  switch (s) {
  case JobState::Queued:
    return "queued";
  case JobState::Running:
    return "running";
  case JobState::Done:
    return "done";
  case JobState::Failed:
    return "failed";
  case JobState::Cancelled:
    return "cancelled";
  }
  return "?";
}

std::optional<JobState> frenzy::service::parseState(llvm::StringRef s) {
  for (JobState st : {JobState::Queued, JobState::Running, JobState::Done,
                      JobState::Failed, JobState::Cancelled})
    if (s == stateName(st))
      return st;
  return std::nullopt;
}

JobStore::~JobStore() { sqlite3_close(db); }

llvm::Error JobStore::error(llvm::StringRef what) const {
  int code = sqlite3_errcode(db);
  std::string hint;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    hint = " (another process holds it: stop the other frenzy-sched serve "
           "or wait, or raise --db-timeout)";
  else if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
    hint = " (the file is damaged: restore it from a backup or move it "
           "away to start an empty queue)";
  return llvm::createStringError(std::errc::io_error, "%s: %s: %s%s",
                                 path.c_str(), what.str().c_str(),
                                 sqlite3_errmsg(db), hint.c_str());
}

llvm::Error JobStore::exec(const char *sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return error("cannot run the query");
  return llvm::Error::success();
}

llvm::Error JobStore::transaction(llvm::function_ref<llvm::Error()> body) {
  if (llvm::Error e = exec("BEGIN IMMEDIATE"))
    return e;
  if (llvm::Error e = body()) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return e;
  }
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    llvm::Error e = error("cannot commit");
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return e;
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<JobStore>>
JobStore::open(const std::string &path, int busyTimeoutMs) {
  sqlite3 *db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<JobStore> s(new JobStore(db, path));
  if (rc != SQLITE_OK)
    return s->error("cannot open the database");
  sqlite3_busy_timeout(db, busyTimeoutMs);
  // The first statement that reads the file: a damaged header or a file
  // that is no database fails here.
  if (llvm::Error e = s->exec("PRAGMA journal_mode=WAL"))
    return std::move(e);
  if (llvm::Error e = s->exec("PRAGMA synchronous=NORMAL; "
                              "PRAGMA foreign_keys=ON"))
    return std::move(e);
  {
    Stmt q(db, "PRAGMA quick_check");
    if (!q.ok() || q.step() != SQLITE_ROW)
      return s->error("cannot check the database");
    if (q.text(0) != "ok")
      return llvm::createStringError(
          std::errc::io_error,
          "%s: the database failed its integrity check (%s); restore it "
          "from a backup or move it away to start an empty queue",
          path.c_str(), q.text(0).c_str());
  }
  if (llvm::Error e = s->transaction([&]() -> llvm::Error {
        if (llvm::Error e = s->exec(kSchema))
          return e;
        Stmt v(db, "SELECT value FROM meta WHERE key='schema'");
        if (v.step() == SQLITE_ROW) {
          if (v.text(0) != std::to_string(kSchemaVersion))
            return llvm::createStringError(
                std::errc::invalid_argument,
                "%s: a queue of schema version %s; this frenzy-sched reads "
                "version %d",
                path.c_str(), v.text(0).c_str(), kSchemaVersion);
          return llvm::Error::success();
        }
        Stmt w(db, "INSERT INTO meta(key, value) VALUES('schema', ?)");
        w.bind(1, llvm::StringRef(std::to_string(kSchemaVersion)));
        if (w.step() != SQLITE_DONE)
          return s->error("cannot write the schema version");
        return llvm::Error::success();
      }))
    return std::move(e);
  return std::move(s);
}

llvm::Error JobStore::addEvent(int64_t job, llvm::StringRef kind,
                               llvm::StringRef detail, double now) {
  Stmt s(db, "INSERT INTO events(job, time, kind, detail) VALUES(?,?,?,?)");
  s.bind(1, job).bind(2, now).bind(3, kind).bind(4, detail);
  if (s.step() != SQLITE_DONE)
    return error("cannot record an event");
  return llvm::Error::success();
}

llvm::Error JobStore::addJob(JobRow &j) {
  return transaction([&]() -> llvm::Error {
    Stmt s(db, "INSERT INTO jobs(uid, model, data, options_key, steps, "
               "global_batch, seq, deadline, priority, state, dir, submitted)"
               " VALUES(?,?,?,?,?,?,?,?,?,'queued',?,?)");
    s.bind(1, j.uid).bind(2, j.model).bind(3, j.data).bind(4, j.optionsKey);
    s.bind(5, j.steps).bind(6, j.globalBatch).bind(7, j.seq);
    s.bindOpt(8, j.deadline).bind(9, j.priority).bind(10, j.dir);
    s.bind(11, j.submitted);
    if (s.step() != SQLITE_DONE)
      return error("cannot add the job");
    j.id = sqlite3_last_insert_rowid(db);
    j.state = JobState::Queued;
    return addEvent(j.id, "submitted", "uid " + std::to_string(j.uid),
                    j.submitted);
  });
}

llvm::Error JobStore::setJobDir(int64_t job, const std::string &dir) {
  return transaction([&]() -> llvm::Error {
    Stmt s(db, "UPDATE jobs SET dir=? WHERE id=?");
    s.bind(1, dir).bind(2, job);
    if (s.step() != SQLITE_DONE)
      return error("cannot update the job");
    return llvm::Error::success();
  });
}

llvm::Expected<std::optional<JobRow>> JobStore::job(int64_t id) {
  std::string sql = std::string("SELECT ") + kJobColumns +
                    " FROM jobs WHERE id=?";
  Stmt s(db, sql.c_str());
  s.bind(1, id);
  int rc = s.step();
  if (rc == SQLITE_ROW)
    return std::optional<JobRow>(readJob(s));
  if (rc == SQLITE_DONE)
    return std::optional<JobRow>();
  return error("cannot read the job");
}

static llvm::Expected<std::vector<JobRow>> readJobs(Stmt &s,
                                                    llvm::Error onError) {
  std::vector<JobRow> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back(readJob(s));
  if (rc != SQLITE_DONE)
    return std::move(onError);
  llvm::consumeError(std::move(onError));
  return out;
}

llvm::Expected<std::vector<JobRow>>
JobStore::jobs(std::optional<int64_t> uid) {
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs" +
                    (uid ? " WHERE uid=?" : "") + " ORDER BY id";
  Stmt s(db, sql.c_str());
  if (uid)
    s.bind(1, *uid);
  return readJobs(s, error("cannot list the jobs"));
}

llvm::Expected<std::vector<JobRow>> JobStore::queued() {
  std::string sql = std::string("SELECT ") + kJobColumns +
                    " FROM jobs WHERE state='queued' ORDER BY id";
  Stmt s(db, sql.c_str());
  return readJobs(s, error("cannot list the queue"));
}

llvm::Expected<std::optional<std::string>>
JobStore::optionTable(llvm::StringRef key) {
  Stmt s(db, "SELECT text FROM option_tables WHERE key=?");
  s.bind(1, key);
  int rc = s.step();
  if (rc == SQLITE_ROW)
    return std::optional<std::string>(s.text(0));
  if (rc == SQLITE_DONE)
    return std::optional<std::string>();
  return error("cannot read an option table");
}

llvm::Error JobStore::putOptionTable(llvm::StringRef key,
                                     llvm::StringRef text) {
  return transaction([&]() -> llvm::Error {
    Stmt s(db, "INSERT OR REPLACE INTO option_tables(key, text) VALUES(?,?)");
    s.bind(1, key).bind(2, text);
    if (s.step() != SQLITE_DONE)
      return error("cannot store an option table");
    return llvm::Error::success();
  });
}

/// Moves `job` from state `from` to `to` (error when it is not in `from`).
static llvm::Error moveState(sqlite3 *db, int64_t job, const char *from,
                             const char *to, const std::string &reason,
                             const char *timeColumn, double now) {
  std::string sql = std::string("UPDATE jobs SET state=?, reason=?") +
                    (timeColumn ? std::string(", ") + timeColumn + "=?" : "") +
                    " WHERE id=? AND state=?";
  Stmt s(db, sql.c_str());
  s.bind(1, llvm::StringRef(to));
  s.bind(2, reason);
  int i = 3;
  if (timeColumn)
    s.bind(i++, now);
  s.bind(i, job);
  s.bind(i + 1, llvm::StringRef(from));
  if (s.step() != SQLITE_DONE)
    return llvm::createStringError(std::errc::io_error, "%s",
                                   sqlite3_errmsg(db));
  if (sqlite3_changes(db) != 1)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "job %lld is not %s", (long long)job, from);
  return llvm::Error::success();
}

llvm::Error JobStore::startAttempt(int64_t job, const AllocationRow &a,
                                   double now) {
  return transaction([&]() -> llvm::Error {
    if (llvm::Error e = moveState(db, job, "queued", "running", "",
                                  nullptr, now))
      return e;
    Stmt u(db, "UPDATE jobs SET attempts=attempts+1, "
               "started=COALESCE(started, ?) WHERE id=?");
    u.bind(1, now).bind(2, job);
    if (u.step() != SQLITE_DONE)
      return error("cannot update the job");
    Stmt s(db, "INSERT INTO allocations(job, attempt, placement, option, "
               "handle, started) VALUES(?,?,?,?,'',?)");
    s.bind(1, job).bind(2, a.attempt).bind(3, a.placement).bind(4, a.option);
    s.bind(5, now);
    if (s.step() != SQLITE_DONE)
      return error("cannot record the allocation");
    return addEvent(job, "started",
                    "attempt " + std::to_string(a.attempt) + " on " +
                        a.placement + " (" + a.option + ")",
                    now);
  });
}

llvm::Error JobStore::setHandle(int64_t job, const std::string &handle) {
  return transaction([&]() -> llvm::Error {
    Stmt s(db, "UPDATE allocations SET handle=? WHERE job=?");
    s.bind(1, handle).bind(2, job);
    if (s.step() != SQLITE_DONE || sqlite3_changes(db) != 1)
      return error("cannot record the launch handle");
    return llvm::Error::success();
  });
}

llvm::Expected<std::vector<AllocationRow>> JobStore::allocations() {
  Stmt s(db, "SELECT job, attempt, placement, option, handle, started "
             "FROM allocations ORDER BY job");
  std::vector<AllocationRow> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back(readAllocation(s));
  if (rc != SQLITE_DONE)
    return error("cannot list the allocations");
  return out;
}

llvm::Expected<std::optional<AllocationRow>>
JobStore::allocation(int64_t job) {
  Stmt s(db, "SELECT job, attempt, placement, option, handle, started "
             "FROM allocations WHERE job=?");
  s.bind(1, job);
  int rc = s.step();
  if (rc == SQLITE_ROW)
    return std::optional<AllocationRow>(readAllocation(s));
  if (rc == SQLITE_DONE)
    return std::optional<AllocationRow>();
  return error("cannot read the allocation");
}

llvm::Error JobStore::endAttempt(int64_t job, JobState to,
                                 const std::string &reason, double now) {
  return transaction([&]() -> llvm::Error {
    bool final = to != JobState::Queued;
    if (llvm::Error e = moveState(db, job, "running", stateName(to), reason,
                                  final ? "finished" : nullptr, now))
      return e;
    Stmt s(db, "DELETE FROM allocations WHERE job=?");
    s.bind(1, job);
    if (s.step() != SQLITE_DONE || sqlite3_changes(db) != 1)
      return error("cannot remove the allocation");
    return addEvent(job, final ? stateName(to) : "requeued", reason, now);
  });
}

llvm::Error JobStore::endQueued(int64_t job, JobState to,
                                const std::string &reason, double now) {
  return transaction([&]() -> llvm::Error {
    if (llvm::Error e = moveState(db, job, "queued", stateName(to), reason,
                                  "finished", now))
      return e;
    return addEvent(job, stateName(to), reason, now);
  });
}

llvm::Expected<std::vector<EventRow>> JobStore::events(int64_t job) {
  Stmt s(db, "SELECT id, job, time, kind, detail FROM events WHERE job=? "
             "ORDER BY id");
  s.bind(1, job);
  std::vector<EventRow> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({s.i64(0), s.i64(1), s.real(2), s.text(3), s.text(4)});
  if (rc != SQLITE_DONE)
    return error("cannot list the events");
  return out;
}

llvm::Error JobStore::readTransaction(llvm::function_ref<llvm::Error()> body) {
  if (llvm::Error e = exec("BEGIN DEFERRED"))
    return e;
  llvm::Error e = body();
  // Nothing was written: ending the snapshot cannot lose anything.
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  return e;
}

llvm::Expected<std::vector<AttemptSpan>>
JobStore::attemptSpans(double since) {
  // startAttempt writes "attempt N on PLACEMENT (OPTION)"; the next event
  // of the job that ends an attempt closes it (a job runs one attempt at a
  // time, so its events alternate).
  Stmt s(db, "SELECT s.job, s.time, s.detail, "
             "(SELECT e.time FROM events e WHERE e.job=s.job AND e.id>s.id "
             "  AND e.kind IN ('done','failed','cancelled','requeued') "
             "  ORDER BY e.id LIMIT 1), "
             "(SELECT e.kind FROM events e WHERE e.job=s.job AND e.id>s.id "
             "  AND e.kind IN ('done','failed','cancelled','requeued') "
             "  ORDER BY e.id LIMIT 1) "
             "FROM events s WHERE s.kind='started' ORDER BY s.time, s.id");
  std::vector<AttemptSpan> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    AttemptSpan a;
    a.job = s.i64(0);
    a.start = s.real(1);
    a.end = s.null(3) ? -1 : s.real(3);
    a.outcome = s.text(4);
    if (a.end >= 0 && a.end < since)
      continue;
    std::string detail = s.text(2);
    llvm::StringRef rest(detail), n;
    if (!rest.consume_front("attempt "))
      continue; // not written by startAttempt
    std::tie(n, rest) = rest.split(" on ");
    if (n.getAsInteger(10, a.attempt))
      continue;
    auto [placement, option] = rest.split(" (");
    a.placement = placement.str();
    option.consume_back(")");
    a.option = option.str();
    out.push_back(std::move(a));
  }
  if (rc != SQLITE_DONE)
    return error("cannot list the attempts");
  return out;
}

llvm::Expected<std::string> JobStore::checkConsistency() {
  Stmt s(db, "SELECT id, state FROM jobs WHERE (state='running') != "
             "(id IN (SELECT job FROM allocations)) UNION ALL "
             "SELECT job, 'orphan' FROM allocations WHERE job NOT IN "
             "(SELECT id FROM jobs)");
  std::string out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out += "job " + std::to_string(s.i64(0)) + " (" + s.text(1) + ") ";
  if (rc != SQLITE_DONE)
    return error("cannot check the tables");
  return out;
}
