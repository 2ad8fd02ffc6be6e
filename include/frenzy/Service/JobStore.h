//===- JobStore.h - the scheduler service's queue in SQLite -----*- C++ -*-===//
//
// The `frenzy-sched serve` queue: jobs, option tables, allocations (a
// running job's GPUs and the launch backend's handle of its processes) and
// an event log, in one SQLite file. Every state change is one transaction,
// so a service killed at any instant leaves either the old or the new
// state, never half of one; the file is in WAL mode with a busy timeout, so
// readers never block the writer and a locked file is an error after the
// timeout, not a hang. No MLIR, no scheduler types: plain rows.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SERVICE_JOBSTORE_H
#define FRENZY_SERVICE_JOBSTORE_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace frenzy::service {

/// queued -> running -> done | failed | cancelled; running -> queued when
/// an attempt is lost or crashed and may be retried.
enum class JobState { Queued, Running, Done, Failed, Cancelled };
const char *stateName(JobState s);
std::optional<JobState> parseState(llvm::StringRef s);

struct JobRow {
  int64_t id = 0;
  int64_t uid = 0;
  std::string model;      // the job's own copy of the ONNX file
  std::string data;       // its own copy of the token file ("" = none)
  std::string optionsKey; // row of option_tables
  int64_t steps = 0, globalBatch = 0, seq = 0;
  std::optional<double> deadline; // seconds since the Unix epoch
  int64_t priority = 0;
  JobState state = JobState::Queued;
  int64_t attempts = 0; // attempts started so far
  std::string reason;   // why it failed or was cancelled
  std::string dir;      // its directory (0700, owned by uid)
  double submitted = 0, started = -1, finished = -1;
};

struct AllocationRow {
  int64_t job = 0;
  int64_t attempt = 0;
  std::string placement; // "node:count,node:count" (cluster node indices)
  std::string option;    // the option's layout, for status
  std::string handle;    // the launch backend's; "" until the launch is committed
  double started = 0;
};

struct EventRow {
  int64_t id = 0, job = 0;
  double time = 0;
  std::string kind, detail;
};

/// One attempt's time on its GPUs, from the events table: its "started"
/// event and the event that ended it (none while it runs).
struct AttemptSpan {
  int64_t job = 0, attempt = 0;
  std::string placement, option;
  double start = 0, end = -1; // end < 0: still running
  std::string outcome;        // done, failed, cancelled, requeued; "" running
};

class JobStore {
public:
  ~JobStore();
  JobStore(JobStore &&) = delete;

  /// Opens (creating when absent) the database; waits up to
  /// `busyTimeoutMs` for a lock. Errors: not a database, failed integrity
  /// check, locked past the timeout, a schema of another version.
  static llvm::Expected<std::unique_ptr<JobStore>>
  open(const std::string &path, int busyTimeoutMs = 5000);

  /// Adds a queued job (its id is set); one event "submitted".
  llvm::Error addJob(JobRow &job);
  /// Sets the job's directory once known (it is named by its id).
  llvm::Error setJobDir(int64_t job, const std::string &dir);
  llvm::Expected<std::optional<JobRow>> job(int64_t id);
  /// All jobs, or only those of `uid`, by id.
  llvm::Expected<std::vector<JobRow>> jobs(std::optional<int64_t> uid = {});
  /// Queued jobs, by id.
  llvm::Expected<std::vector<JobRow>> queued();

  /// The option table text under `key`, if stored.
  llvm::Expected<std::optional<std::string>> optionTable(llvm::StringRef key);
  llvm::Error putOptionTable(llvm::StringRef key, llvm::StringRef text);

  /// queued -> running: the allocation (without handle) is recorded and
  /// the attempt counted, in one transaction.
  llvm::Error startAttempt(int64_t job, const AllocationRow &a, double now);
  /// The backend's handle of the attempt's processes, once they exist.
  llvm::Error setHandle(int64_t job, const std::string &handle);
  llvm::Expected<std::vector<AllocationRow>> allocations();
  llvm::Expected<std::optional<AllocationRow>> allocation(int64_t job);

  /// Ends the running attempt: the allocation is removed and the job goes
  /// to `to` (Done, Failed, Cancelled, or Queued to retry) with `reason`.
  llvm::Error endAttempt(int64_t job, JobState to, const std::string &reason,
                         double now);
  /// A queued job ends without running (cancelled or refused).
  llvm::Error endQueued(int64_t job, JobState to, const std::string &reason,
                        double now);

  llvm::Error addEvent(int64_t job, llvm::StringRef kind,
                       llvm::StringRef detail, double now);
  llvm::Expected<std::vector<EventRow>> events(int64_t job);
  /// Attempts that ran at some time after `since`, by start time.
  llvm::Expected<std::vector<AttemptSpan>> attemptSpans(double since);

  /// Runs `body`'s reads as one snapshot (BEGIN DEFERRED ... COMMIT): a
  /// reader on another connection sees the tables between two state
  /// changes, never in the middle of one.
  llvm::Error readTransaction(llvm::function_ref<llvm::Error()> body);

  /// Checks the invariants between the tables (every running job has
  /// exactly one allocation and nothing else has one); "" when they hold.
  llvm::Expected<std::string> checkConsistency();

private:
  explicit JobStore(sqlite3 *db, std::string path)
      : db(db), path(std::move(path)) {}
  llvm::Error exec(const char *sql);
  llvm::Error error(llvm::StringRef what) const;
  /// Runs `body` inside BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error).
  llvm::Error transaction(llvm::function_ref<llvm::Error()> body);
  sqlite3 *db;
  std::string path;
};

} // namespace frenzy::service

#endif
