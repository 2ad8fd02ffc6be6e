//===- ReplayMain.cpp - run a fuzz harness on given files -----------------===//
//
// Linked into fuzz-NAME when the build is not a libFuzzer one: runs
// LLVMFuzzerTestOneInput once on each file named on the command line, so
// the crash inputs found by fuzzing stay regression tests in the ordinary
// (and the sanitizer) build. A crash or sanitizer report is the failure;
// returning normally from every input is the pass.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-')
      continue; // libFuzzer flags, accepted for a common command line
    std::ifstream in(arg, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", arg.c_str());
      return 2;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                           bytes.size());
    ++ran;
  }
  std::printf("replayed %d inputs\n", ran);
  return 0;
}
