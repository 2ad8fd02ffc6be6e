//===- FuzzInputFile.h - fuzz input bytes as a file on disk -----*- C++ -*-===//
//
// The runtime's readers take paths (a user points frenzy-launch at files),
// so each harness writes the input to a per-process scratch file and hands
// the reader its path. /dev/shm keeps this off the disk.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_FUZZ_RUNTIME_FUZZINPUTFILE_H
#define FRENZY_FUZZ_RUNTIME_FUZZINPUTFILE_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace frenzy::fuzz {

/// A scratch directory of this process (created once).
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string d = std::string(base) + "/frenzy-fuzz-" +
                     std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

/// Writes `size` bytes to `path`, replacing it.
inline void writeFile(const std::string &path, const uint8_t *data,
                      size_t size) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    std::abort();
  if (size && std::fwrite(data, 1, size, f) != size)
    std::abort();
  std::fclose(f);
}

} // namespace frenzy::fuzz

#endif
