//===- OnnxTextFuzzer.cpp - fuzz the importer with .onnxtext bytes --------===//
#include "ImportHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return frenzy::fuzz::fuzzImport(data, size, ".onnxtext");
}
