//===- Checkpoint.h - parameters and optimizer state on disk ----*- C++ -*-===//
//
// Layout (docs/runtime.md, "Checkpoints"): DIR/step-NNNNNNNN/rank-R.bin and
// DIR/latest naming the newest complete step and the plan's hash. Each file
// is written to a temporary name and renamed, and `latest` moves only after
// every rank has renamed its file, so a run killed at any moment leaves the
// previous checkpoint intact. A checkpoint belongs to one plan: resuming
// with another plan, or writing into a directory holding another plan's
// checkpoints, is an error before anything is written.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_CHECKPOINT_H
#define FRENZY_RUNTIME_EXEC_CHECKPOINT_H

#include "Executor.h"

#include <functional>

namespace frenzy::rt {

struct CheckpointOptions {
  std::string dir;       // where to write ("" : never)
  int64_t every = 0;     // steps between checkpoints (0: only at the end)
  std::string resumeDir; // resume from its latest checkpoint ("" : no)
  uint64_t planHash = 0; // FNV-1a of plan.bin
  int rank = 0;
  /// Waits for every rank (a no-op for one rank).
  std::function<void()> barrier = [] {};
};

/// A parameter's values and moments as stored.
struct StoredParam {
  std::vector<float> value, m, v;
};

class Checkpointer {
public:
  /// Checks the directories (another plan's checkpoints: an error).
  explicit Checkpointer(CheckpointOptions o);
  /// Loads this rank's parameters and moments from the resume directory;
  /// returns the first step to run (1 without --resume).
  int64_t resume(Executor &ex);
  /// Writes a checkpoint when `step` is a multiple of `every`.
  void afterStep(int64_t step, Executor &ex);
  /// Writes the final checkpoint (unless afterStep just did).
  void finish(int64_t step, Executor &ex);
  const std::string &directory() const { return o.dir; }

private:
  void write(int64_t step, Executor &ex);
  CheckpointOptions o;
  int64_t lastWritten = 0;
};

/// The newest complete step in `dir` and the hash of its plan; throws when
/// there is none.
int64_t latestCheckpoint(const std::string &dir, uint64_t *planHash);
/// One rank's stored parameters by name.
std::map<std::string, StoredParam>
readRankCheckpoint(const std::string &dir, int64_t step, int rank,
                   uint64_t planHash);

} // namespace frenzy::rt

#endif
