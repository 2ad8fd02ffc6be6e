//===- ProfileTestText.h - a small device profile for unit tests -*- C++ -*-===//
//
// The profile text the calibration and core-sharing tests read (round
// figures, so their expectations can be worked out by hand), and a
// temporary file to read it from.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_UNITTESTS_PROFILETESTTEXT_H
#define FRENZY_UNITTESTS_PROFILETESTTEXT_H

#include <fstream>
#include <string>
#include <unistd.h>

namespace {

inline std::string writeTemp(const std::string &text) {
  char name[] = "/tmp/frenzy-profile-XXXXXX";
  int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

const char *kProfile = R"(frenzy_profile: 1
gpu_type: cpu
op_overhead_us: 1
copy_gbs: 10
cores: 2
matmul_gflops:
  - { size: 1e6, rate: 10 }
  - { size: 1e8, rate: 30 }
attention_gflops:
  - { size: 1e6, rate: 5 }
memory_gbs:
  - { size: 1e3, rate: 40 }
  - { size: 1e7, rate: 4 }
kernel_gbs:
  - { op: gelu, size: 1e4, rate: 2 }
links:
  - { kind: shm, latency_us: 2, bandwidth_gbs: 1, allreduce_latency_us: 3, allreduce_bandwidth_gbs: 0.5 }
)";

} // namespace

#endif
