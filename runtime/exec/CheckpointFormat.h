//===- CheckpointFormat.h - layout-independent checkpoint files -*- C++ -*-===//
//
// The on-disk pieces of a checkpoint (docs/runtime.md, "Checkpoints"):
//
//   DIR/step-NNNNNNNN/manifest     what was trained and how (text), written
//                                  last: its final line `end` marks the
//                                  checkpoint complete
//   DIR/step-NNNNNNNN/rank-R.bin   the parameter pieces rank R wrote
//   DIR/step-NNNNNNNN.tmp/         a checkpoint being written (never read)
//
// A piece is a whole parameter or one TP shard of it, described by the
// parameter's global shape and the shard's [dim, parts, blocks, index], so
// any plan can put it back together and cut its own shards. Each piece has
// a checksum; a manifest names every file with its size. Nothing here
// knows about plans or ranks' roles: Checkpoint.cpp decides who writes
// what and who reads what.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_CHECKPOINTFORMAT_H
#define FRENZY_RUNTIME_EXEC_CHECKPOINTFORMAT_H

#include "Tensor.h"
#include "plan.pb.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace frenzy::rt {

/// 64-bit checksum of `n` bytes (FNV-1a over 8-byte words; damage
/// detection, not security), continuing from `h`.
uint64_t checksum64(const void *data, size_t n,
                    uint64_t h = 0xcbf29ce484222325ull);

/// One stored piece of a parameter, as its rank file describes it.
struct PieceHeader {
  std::string name;
  std::vector<int64_t> shape; // the whole parameter's shape
  int32_t dim = 0, parts = 1, blocks = 1, index = 0; // parts 1: whole
  int64_t elements = 0;       // of the piece (value only)
  uint32_t moments = 0;       // optimizer buffers after the value: 0, 1, 2
  uint64_t checksum = 0;      // of value, m, v as stored
  int64_t offset = 0;         // where the values start in the file
};

/// What a checkpoint holds and the settings that made it.
struct Manifest {
  struct Param {
    std::string name;
    std::vector<int64_t> shape;
    uint32_t moments = 0;
  };
  struct File {
    std::string name; // rank-R.bin
    int64_t bytes = 0, entries = 0;
  };
  int64_t step = 0;
  uint64_t modelHash = 0;
  std::string modelPath;
  plan::Optimizer optimizer;
  int64_t globalBatch = 0, seq = 0;
  std::string precision;
  int64_t dataWindows = 0; // token windows the reader has consumed
  uint64_t seed = 0;       // the run seed (dropout streams)
  double lr = 0;           // the learning rate of `step`
  uint64_t planHash = 0;
  std::string planSummary;
  std::vector<Param> params;
  std::vector<File> files;
  double seconds = 0; // time to write it
};

std::string formatManifest(const Manifest &m);
/// A name as one space-free word (bytes outside '!'..'~' and '%' become
/// %XX; "" is "-") and back (false: malformed).
std::string escapeName(const std::string &s);
bool unescapeName(const std::string &s, std::string &out);
std::string dimsText(const std::vector<int64_t> &shape);
/// Parses a manifest file; throws RuntimeError naming the file and line.
Manifest readManifest(const std::string &path);

std::string stepDirName(const std::string &dir, int64_t step);

/// The newest complete checkpoint of `dir` (step 0: none) and the
/// half-written ones newer than it.
struct CheckpointScan {
  int64_t step = 0;
  std::string path; // DIR/step-NNNNNNNN
  std::vector<std::string> halfWritten;
};
CheckpointScan scanCheckpoints(const std::string &dir);

/// Writes a rank file under a temporary name; commit() flushes it to disk
/// and renames it into place.
class PieceWriter {
public:
  PieceWriter(const std::string &path, uint64_t modelHash, int64_t step,
              int32_t rank);
  ~PieceWriter();
  void add(PieceHeader h, const float *value, const float *m,
           const float *v);
  /// Bytes written so far.
  int64_t bytes() const { return written; }
  int32_t entries() const { return count; }
  void commit();

private:
  void put(const void *p, size_t n);
  std::string path, tmp;
  std::FILE *f = nullptr;
  int64_t written = 0;
  int32_t count = 0;
};

/// The pieces of a rank file (headers only; data skipped), checked against
/// the model hash, step and rank of its name and the file's size.
std::vector<PieceHeader> readPieceIndex(const std::string &path,
                                        uint64_t modelHash, int64_t step,
                                        int32_t rank);
/// Reads one piece's value and moments (moments it lacks are left empty)
/// and checks its checksum.
void readPiece(const std::string &path, const PieceHeader &h,
               std::vector<float> &value, std::vector<float> &m,
               std::vector<float> &v);

/// File system steps that make a checkpoint survive a crash.
void fsyncPath(const std::string &path);
void renameInto(const std::string &from, const std::string &to);
/// Removes a checkpoint directory and its files (not recursive below).
void removeCheckpointDir(const std::string &path);
/// Writes a small text file atomically (temporary, fsync, rename).
void writeFileAtomically(const std::string &path, const std::string &text);

} // namespace frenzy::rt

#endif
