//===- TokenData.h - token files and batches --------------------*- C++ -*-===//
//
// The llm.c token-shard format: a header of 256 little-endian int32
// (magic 20240520, version 1, token count), then the tokens as uint16.
// Step s takes B windows of T+1 consecutive tokens, each starting T tokens
// after the previous one, wrapping around the file: inputs are the first T,
// targets the last T. Deterministic: no shuffling. A resumed run may
// continue from a stored window count instead (continueFrom).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_EXEC_TOKENDATA_H
#define FRENZY_RUNTIME_EXEC_TOKENDATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace frenzy::rt {

constexpr int32_t kTokenMagic = 20240520;

class TokenData {
public:
  /// Reads the whole file; throws RuntimeError naming the file on a bad
  /// header or a size that disagrees with it.
  explicit TokenData(const std::string &path);
  int64_t size() const { return int64_t(tokens.size()); }
  /// Fails unless the file holds at least one batch of B x (T + 1) tokens.
  void requireBatch(int64_t B, int64_t T) const;
  /// Fills idx and targets (each B*T int64) for 1-based step `step`.
  void batch(int64_t step, int64_t B, int64_t T, int64_t *idx,
             int64_t *targets) const;
  /// Rows [first, first + rows) of that batch (a micro-batch); null
  /// pointers are skipped.
  void rows(int64_t step, int64_t B, int64_t T, int64_t first, int64_t rows,
            int64_t *idx, int64_t *targets) const;
  /// A resumed run: steps after `step` continue after the first `windows`
  /// windows (what the checkpoint's run had read, whatever its batch).
  /// With an unchanged batch this is where the step number points anyway.
  void continueFrom(int64_t step, int64_t windows) {
    baseStep = step;
    baseWindows = windows;
  }

private:
  std::string path;
  std::vector<uint16_t> tokens;
  int64_t baseStep = 0, baseWindows = 0;
};

} // namespace frenzy::rt

#endif
