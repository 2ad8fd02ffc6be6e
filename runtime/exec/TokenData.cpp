//===- TokenData.cpp - token files and batches ----------------------------===//
#include "TokenData.h"

#include "Tensor.h"

#include <fstream>

namespace frenzy::rt {

TokenData::TokenData(const std::string &p) : path(p) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(path + ": cannot open the token file");
  int32_t header[256] = {};
  if (!in.read(reinterpret_cast<char *>(header), sizeof header))
    throw RuntimeError(path + ": shorter than the 1024-byte header of a token "
                              "file (see docs/data.md)");
  if (header[0] != kTokenMagic || header[1] != 1)
    throw RuntimeError(path + ": not a token file (magic " +
                       std::to_string(header[0]) + ", version " +
                       std::to_string(header[1]) + "; expected " +
                       std::to_string(kTokenMagic) +
                       ", 1); make one with scripts/make_corpus.py");
  // The count is checked against the file's size before anything is
  // allocated: a damaged header must not ask for gigabytes.
  int64_t n = header[2];
  in.seekg(0, std::ios::end);
  int64_t available = (int64_t(in.tellg()) - int64_t(sizeof header)) / 2;
  if (n < 0 || n > available)
    throw RuntimeError(path + ": header promises " + std::to_string(n) +
                       " tokens but the file is shorter");
  in.seekg(sizeof header);
  tokens.resize(n);
  if (!in.read(reinterpret_cast<char *>(tokens.data()), n * sizeof(uint16_t)))
    throw RuntimeError(path + ": cannot read its " + std::to_string(n) +
                       " tokens");
}

void TokenData::requireBatch(int64_t B, int64_t T) const {
  if (size() < B * T + 1)
    throw RuntimeError(path + ": " + std::to_string(size()) +
                       " tokens is less than one batch (" + std::to_string(B) +
                       " x " + std::to_string(T) + " + 1 = " +
                       std::to_string(B * T + 1) + " tokens)");
}

void TokenData::batch(int64_t step, int64_t B, int64_t T, int64_t *idx,
                      int64_t *targets) const {
  rows(step, B, T, 0, B, idx, targets);
}

void TokenData::rows(int64_t step, int64_t B, int64_t T, int64_t first,
                     int64_t rows, int64_t *idx, int64_t *targets) const {
  int64_t span = size() - T; // window starts in [0, span)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t window = baseWindows + (step - baseStep - 1) * B + first + r;
    // Reduced before the multiply: a checkpoint's window count may be
    // large, and window * T must not overflow into a negative start.
    int64_t w = window % span;
    if (w < 0)
      w += span;
    int64_t start = (w * T) % span;
    for (int64_t t = 0; t < T; ++t) {
      if (idx)
        idx[r * T + t] = tokens[start + t];
      if (targets)
        targets[r * T + t] = tokens[start + t + 1];
    }
  }
}

} // namespace frenzy::rt
