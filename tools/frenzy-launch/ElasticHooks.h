//===- ElasticHooks.h - what a supervisor sees of the ranks -----*- C++ -*-===//
//
// Two small hooks for frenzy-elastic (docs/elastic.md), both off unless
// asked for:
//  --status-dir=DIR  every rank keeps DIR/rank-R (pid, host, step, state)
//                    up to date, replaced atomically after each step, so a
//                    supervisor can tell which rank's process died first
//                    and how far the job got; a rank that ends on its own
//                    error says `failed` first, so its exit is not taken
//                    for a lost device (the error comes through mpirun
//                    later than the pid disappears), and one ended by
//                    SIGTERM says `ended`, so the ranks that vanished
//                    without a word (the lost ones) are the ones still
//                    `running`;
//  --stop-file=FILE  after each checkpoint the ranks look for FILE (rank 0
//                    looks, every rank learns the answer) and stop cleanly
//                    when it exists: the supervisor's way to end a job at a
//                    checkpoint boundary (a node joins) without losing a
//                    step.
// And one for tests, off unless FRENZY_TEST_HOLD_DIR is set: holdForTest.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_LAUNCH_ELASTICHOOKS_H
#define FRENZY_TOOLS_LAUNCH_ELASTICHOOKS_H

#include <cstdint>
#include <string>

namespace frenzy::rt {

class Comm;

class RankStatus {
public:
  /// `dir` empty: every update is a no-op.
  RankStatus(std::string dir, int rank);
  /// Left by an exception (the rank's error, which ends the job): `failed`.
  ~RankStatus();
  RankStatus(const RankStatus &) = delete;
  RankStatus &operator=(const RankStatus &) = delete;
  /// state: starting | running | stopped | done | failed (| ended: written
  /// by the SIGTERM handler this installs, from the last update's step).
  void update(int64_t step, const char *state);

private:
  std::string dir;
  int rank;
  int64_t lastStep = 0;
  int exceptionsAtStart;
};

/// Whether `path` names an existing file ("" : never).
bool stopFileExists(const std::string &path);

/// FRENZY_TEST_HOLD_DIR=DIR (tests only): called when a rank has finished
/// step `step` (its checkpoint written, its status file replaced); the rank
/// waits while DIR/step-STEP exists. A test harness creates the file before
/// the run, waits until every rank's status file says STEP, kills a rank or
/// edits the cluster file, and removes it: the change lands at exactly that
/// step however slow or loaded the machine is (test/lib/elastic_run.py,
/// kill_resume.py). `comm` (null for one rank): its core turn is given up
/// while the rank waits, so its core-mates can reach the step too.
void holdForTest(int64_t step, Comm *comm);

/// The line rank 0 prints when the job stops at a stop file.
void printStopped(int64_t step, const std::string &path);

} // namespace frenzy::rt

#endif
