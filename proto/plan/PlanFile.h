//===- PlanFile.h - the framing of plan.bin around its protobuf -*- C++ -*-===//
//
// A plan travels to every node of a cluster; a damaged or truncated copy
// must be refused before a byte of it is parsed, so plan.bin is a fixed
// 32-byte header, then the serialised frenzy.plan.Plan (docs/plan.md):
//
//   0  8  magic "FRZPLAN\n"
//   8  4  kPlanVersion, little-endian (an old plan is named as such)
//  12  4  reserved, zero
//  16  8  payload length in bytes, little-endian
//  24  8  FNV-1a 64 of the payload, little-endian
//  32     payload
//
// Every header byte is checked (magic, version, reserved, length against the
// file's size, checksum over the payload), so any change to the file is
// refused. Header-only and free of protobuf and MLIR: the compiler writes
// with encodePlanFile, the runtime and the fuzzers read with decodePlanFile.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_PLAN_PLANFILE_H
#define FRENZY_RUNTIME_PLAN_PLANFILE_H

#include "plan/PlanVersion.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace frenzy::plan {

constexpr char kPlanMagic[8] = {'F', 'R', 'Z', 'P', 'L', 'A', 'N', '\n'};
constexpr size_t kPlanHeaderBytes = 32;

/// FNV-1a 64 of a buffer (the same function hashFile applies to files).
inline uint64_t fnv1a64(const void *data, size_t size,
                        uint64_t h = 1469598103934665603ull) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

namespace detail {
inline void putLE(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}
inline uint64_t getLE(const std::string &in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}
inline std::string hex16(uint64_t v) {
  char s[20];
  std::snprintf(s, sizeof s, "%016" PRIx64, v);
  return s;
}
} // namespace detail

/// The bytes of plan.bin for a serialised plan.
inline std::string encodePlanFile(const std::string &payload) {
  std::string out(kPlanMagic, sizeof kPlanMagic);
  detail::putLE(out, kPlanVersion, 4);
  detail::putLE(out, 0, 4);
  detail::putLE(out, payload.size(), 8);
  detail::putLE(out, fnv1a64(payload.data(), payload.size()), 8);
  return out + payload;
}

/// Checks the framing of plan.bin's bytes. On success sets `payload` to the
/// protobuf bytes' offset and returns ""; otherwise returns what is wrong
/// (one clause, for "<file>: <clause>").
inline std::string decodePlanFile(const std::string &bytes, size_t &payload) {
  using namespace detail;
  const char *remake = "; re-run frenzy-opt ... -o to make it again";
  if (bytes.size() < sizeof kPlanMagic ||
      std::memcmp(bytes.data(), kPlanMagic, sizeof kPlanMagic) != 0)
    return "not a Frenzy plan (no plan header); make one with frenzy-opt "
           "--cluster=... -o";
  if (bytes.size() < kPlanHeaderBytes)
    return "truncated plan: " + std::to_string(bytes.size()) +
           " bytes, less than its " + std::to_string(kPlanHeaderBytes) +
           "-byte header" + remake;
  uint64_t version = getLE(bytes, 8, 4), reserved = getLE(bytes, 12, 4);
  uint64_t length = getLE(bytes, 16, 8), sum = getLE(bytes, 24, 8);
  if (version != kPlanVersion)
    return "plan format version " + std::to_string(version) +
           " is not this runtime's (" + std::to_string(kPlanVersion) + ")" +
           remake;
  if (reserved != 0)
    return "damaged plan: reserved header bytes are not zero" +
           std::string(remake);
  uint64_t have = bytes.size() - kPlanHeaderBytes;
  if (length != have)
    return (length > have ? "truncated plan: the header promises "
                          : "damaged plan: the header promises ") +
           std::to_string(length) + " bytes of plan, the file holds " +
           std::to_string(have) + remake;
  uint64_t actual = fnv1a64(bytes.data() + kPlanHeaderBytes, have);
  if (actual != sum)
    return "damaged plan: checksum " + hex16(actual) + " does not match the "
           "header's " + hex16(sum) + remake;
  payload = kPlanHeaderBytes;
  return "";
}

} // namespace frenzy::plan

#endif
