//===- TokenDataFuzzer.cpp - fuzz the token-file reader -------------------===//
//
// Any bytes as a token file: the reader must refuse with a RuntimeError or
// give tokens that batches can be cut from without reading out of bounds.
//
//===----------------------------------------------------------------------===//
#include "FuzzInputFile.h"
#include "Tensor.h"
#include "TokenData.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = frenzy::fuzz::scratchDir() + "/tokens.bin";
  frenzy::fuzz::writeFile(path, data, size);
  try {
    frenzy::rt::TokenData tokens(path);
    const int64_t B = 2, T = 4;
    tokens.requireBatch(B, T);
    std::vector<int64_t> idx(B * T), targets(B * T);
    for (int64_t step : {1, 2, 1000003})
      tokens.batch(step, B, T, idx.data(), targets.data());
    tokens.rows(3, B, T, 1, 1, idx.data(), nullptr);
  } catch (const frenzy::rt::RuntimeError &) {
  }
  return 0;
}
