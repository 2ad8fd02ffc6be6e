//===- OnnxBinaryFuzzer.cpp - fuzz the importer with binary .onnx bytes ---===//
#include "ImportHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return frenzy::fuzz::fuzzImport(data, size, ".onnx");
}
