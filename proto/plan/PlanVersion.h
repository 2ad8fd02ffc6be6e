//===- PlanVersion.h - plan format version and model hash -------*- C++ -*-===//
//
// Shared by the compiler (which writes plans) and the runtime (which checks
// them), header-only so the runtime needs no compiler library.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PROTO_PLAN_PLANVERSION_H
#define FRENZY_PROTO_PLAN_PLANVERSION_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace frenzy::plan {

/// Bumped whenever a plan's meaning changes; the runtime refuses others.
constexpr uint32_t kPlanVersion = 4; // 4: plan.bin has a header (PlanFile.h)

/// FNV-1a 64 over a file's bytes: identifies the model a plan was made for.
/// Returns false when the file cannot be read.
inline bool hashFile(const std::string &path, uint64_t &hash) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  uint64_t h = 1469598103934665603ull;
  unsigned char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    for (size_t i = 0; i < n; ++i)
      h = (h ^ buf[i]) * 1099511628211ull;
  std::fclose(f);
  hash = h;
  return true;
}

} // namespace frenzy::plan

#endif
