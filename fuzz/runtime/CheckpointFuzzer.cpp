//===- CheckpointFuzzer.cpp - fuzz the checkpoint readers -----------------===//
//
// The input is used twice: as a rank file (the binary parameter pieces)
// and as a step directory's manifest. The rank file is read with the model
// hash, step and rank its own header claims, so the fuzzer gets past the
// header checks to the pieces, each of which is then read (checksum
// included); the manifest is parsed, then opened as a checkpoint (which
// reads the rank files it names, this one among them). Every reader must
// refuse with a RuntimeError or succeed.
//
//===----------------------------------------------------------------------===//
#include "Checkpoint.h"
#include "FuzzInputFile.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &dir = frenzy::fuzz::scratchDir();
  uint64_t hash = 0;
  int64_t step = 1;
  int32_t rank = 0;
  // Header: magic[8] version u32, plan hash u64, step i64, rank i32, ...
  if (size >= 32) {
    std::memcpy(&hash, data + 12, 8);
    std::memcpy(&step, data + 20, 8);
    std::memcpy(&rank, data + 28, 4);
  }
  // Keep the path a file name (the step is printed with %08d).
  if (step < 0 || step > 99999999)
    step = 1;
  if (rank < 0 || rank > 9999)
    rank = 0;
  char stepName[32];
  std::snprintf(stepName, sizeof stepName, "/step-%08lld", (long long)step);
  std::string stepDir = dir + stepName;
  mkdir(stepDir.c_str(), 0700);
  std::string rankPath = stepDir + "/rank-" + std::to_string(rank) + ".bin";
  frenzy::fuzz::writeFile(rankPath, data, size);
  std::string manifest = stepDir + "/manifest";
  frenzy::fuzz::writeFile(manifest, data, size);
  try {
    std::vector<float> value, m, v;
    for (const frenzy::rt::PieceHeader &h :
         frenzy::rt::readPieceIndex(rankPath, hash, step, rank))
      frenzy::rt::readPiece(rankPath, h, value, m, v);
  } catch (const frenzy::rt::RuntimeError &) {
  }
  try {
    frenzy::rt::readManifest(manifest);
    frenzy::rt::StoredCheckpoint c(stepDir);
    std::vector<float> value, m, v;
    for (const frenzy::rt::Manifest::Param &p : c.manifest().params)
      c.load(p.name, p.shape, frenzy::rt::Slice{}, value, m, v);
  } catch (const frenzy::rt::RuntimeError &) {
  }
  unlink(manifest.c_str());
  unlink(rankPath.c_str());
  rmdir(stepDir.c_str());
  return 0;
}
