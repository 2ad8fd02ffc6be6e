//===- PlanLoader.cpp - read, check and validate plan.bin -----------------===//
#include "PlanLoader.h"

#include "PlanValidator.h"
#include "plan/PlanFile.h"

#include <google/protobuf/stubs/logging.h>

#include <fstream>
#include <iterator>

namespace frenzy::rt {

plan::Plan loadPlanBytes(const std::string &bytes, const std::string &name) {
  size_t offset = 0;
  // protobuf logs why a parse fails (e.g. a string that is not UTF-8) on
  // stderr; the refusal is the one line the user gets.
  google::protobuf::LogSilencer quiet;
  plan::Plan p;
  std::string bad = plan::decodePlanFile(bytes, offset);
  if (!bad.empty()) {
    // Plans before version 4 were the bare protobuf: say so, not "foreign".
    if (bytes.compare(0, 8, plan::kPlanMagic, 8) != 0 &&
        p.ParseFromString(bytes) && p.version() >= 1 &&
        p.version() < plan::kPlanVersion)
      throw RuntimeError(name + ": plan format version " +
                         std::to_string(p.version()) +
                         " (before plan files had a header) is not this "
                         "runtime's (" + std::to_string(plan::kPlanVersion) +
                         "); re-run frenzy-opt to rebuild the plan");
    throw RuntimeError(name + ": " + bad);
  }
  if (!p.ParseFromArray(bytes.data() + offset, int(bytes.size() - offset)))
    throw RuntimeError(name + ": the plan's checksum matches but its "
                              "contents do not parse (a frenzy-opt of "
                              "another version?); re-run frenzy-opt");
  validatePlan(p, name);
  return p;
}

plan::Plan loadPlanFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(path + ": cannot open the plan");
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (in.bad())
    throw RuntimeError(path + ": cannot read the plan");
  return loadPlanBytes(bytes, path);
}

} // namespace frenzy::rt
