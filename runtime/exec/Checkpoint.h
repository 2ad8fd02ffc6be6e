//===- Checkpoint.h - checkpoints any plan can resume -----------*- C++ -*-===//
//
// Layout (docs/runtime.md, "Checkpoints"; CheckpointFormat.h): every
// trainable parameter and its optimizer moments are written once, whole or
// as the TP shards of one pipeline's owners (the pipelines share the
// parameters out by size), each piece described by the
// parameter's global shape and its cut, with a manifest of the training
// settings, the step, the data position and the run seed. Ranks write
// their pieces in parallel into DIR/step-NNNNNNNN.tmp; rank 0 writes the
// manifest last and renames the directory into place, so a run killed at
// any moment leaves the previous checkpoint intact.
//
// Any plan of the same model and settings resumes it (other pipelines,
// PP/TP/DP degrees, rank counts, clusters): each rank reads the slices its
// own plan gives it. What must match (model, sequence length, optimizer)
// is checked before anything is read or written, with one line naming what
// differs; a changed global batch or schedule is a warning.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_CHECKPOINT_H
#define FRENZY_RUNTIME_EXEC_CHECKPOINT_H

#include "CheckpointReshard.h"
#include "Executor.h"

#include <functional>
#include <memory>

namespace frenzy::rt {

class TokenData;

struct CheckpointOptions {
  std::string dir;       // where to write ("" : never)
  int64_t every = 0;     // steps between checkpoints (0: only at the end)
  std::string resumeDir; // resume from its newest complete checkpoint
  uint64_t planHash = 0; // FNV-1a of plan.bin (recorded, not checked)
  const plan::Plan *plan = nullptr;
  int rank = 0;
  uint64_t seed = 0;     // the run seed (recorded; a change is a warning)
  bool print = true;     // this process prints warnings and timings
  /// Waits for every rank (a no-op for one rank).
  std::function<void()> barrier = [] {};
  /// Rank 0 gets every rank's text in rank order; the others get nothing.
  std::function<std::vector<std::string>(const std::string &)> gather =
      [](const std::string &s) { return std::vector<std::string>{s}; };
  /// Called before a checkpoint reads the executor: a device backend
  /// copies its parameters and moments to the host here, so a checkpoint
  /// is the same format whichever backend wrote it.
  std::function<void()> beforeWrite = [] {};
};

class Checkpointer {
public:
  /// Checks the directories: another model's checkpoints in --checkpoint-dir,
  /// no complete checkpoint or an incompatible one in --resume: an error
  /// before anything is written.
  explicit Checkpointer(CheckpointOptions o);
  ~Checkpointer();
  /// Loads this rank's parameters and moments from the resume checkpoint;
  /// returns the first step to run (1 without --resume).
  int64_t resume(Executor &ex);
  /// Points the token reader at the resumed run's data position (the
  /// windows the checkpoint had consumed; matters when the global batch
  /// changed).
  void continueData(TokenData &data) const;
  /// Writes a checkpoint when `step` is a multiple of `every`.
  void afterStep(int64_t step, Executor &ex);
  /// Writes the final checkpoint (unless afterStep just did).
  void finish(int64_t step, Executor &ex);
  const std::string &directory() const { return o.dir; }

private:
  void write(int64_t step, Executor &ex);
  std::string ownedText(int64_t step, Executor &ex, const std::string &tmp);
  void writeManifest(int64_t step, double lr,
                     const std::vector<std::string> &texts,
                     const std::string &tmp, double seconds);
  int64_t globalBatch() const;
  CheckpointOptions o;
  int64_t lastWritten = 0;
  std::unique_ptr<StoredCheckpoint> from; // the resume checkpoint
  std::map<std::string, int> writers;     // parameter -> writing pipeline
  std::vector<std::string> warnings;
  int64_t baseStep = 0, baseWindows = 0;  // data position at baseStep
};

/// Every trainable parameter's whole value from the newest complete
/// checkpoint of `dir` (for --export of a multi-rank run).
std::map<std::string, std::vector<float>>
readCheckpointParameters(const std::string &dir, uint64_t modelHash);

/// A one-line description of a plan's layout, recorded in manifests.
std::string planSummary(const plan::Plan &p);

} // namespace frenzy::rt

#endif
