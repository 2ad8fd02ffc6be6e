//===- CheckpointReshard.h - read any plan's checkpoint ---------*- C++ -*-===//
//
// A complete checkpoint opened for reading: its manifest and the index of
// its rank files. load() gives any slice of a parameter (and its optimizer
// moments) whatever plan wrote it: the stored piece itself when the
// writer's shard is the one asked for, otherwise the whole parameter put
// together from its pieces and then cut. The writer's ranks, pipelines and
// TP degrees play no part.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_CHECKPOINTRESHARD_H
#define FRENZY_RUNTIME_EXEC_CHECKPOINTRESHARD_H

#include "CheckpointFormat.h"

#include <map>

namespace frenzy::rt {

/// Which part of a parameter a reader holds (parts 1: all of it).
struct Slice {
  int32_t dim = 0, parts = 1, blocks = 1, index = 0;
};

class StoredCheckpoint {
public:
  /// Reads the manifest of `stepPath` (DIR/step-NNNNNNNN) and the piece
  /// index of each rank file it names (sizes and headers checked).
  explicit StoredCheckpoint(const std::string &stepPath);
  const Manifest &manifest() const { return m; }
  const std::string &path() const { return stepPath; }
  /// The slice `s` of parameter `name`, whose whole shape must be `shape`:
  /// its value and the moments stored with it (empty when not stored).
  /// Returns the bytes read.
  int64_t load(const std::string &name, const std::vector<int64_t> &shape,
               const Slice &s, std::vector<float> &value,
               std::vector<float> &mom1, std::vector<float> &mom2) const;

private:
  struct Stored {
    std::string file;
    PieceHeader header;
  };
  std::string stepPath;
  Manifest m;
  std::map<std::string, std::vector<Stored>> pieces; // by parameter name
};

} // namespace frenzy::rt

#endif
