//===- PlanLoader.cpp - read, check and validate plan.bin -----------------===//
#include "PlanLoader.h"

#include "PlanValidator.h"
#include "plan/PlanFile.h"

#include <fstream>
#include <iterator>

namespace frenzy::rt {

plan::Plan loadPlanBytes(const std::string &bytes, const std::string &name) {
  size_t offset = 0;
  std::string bad = plan::decodePlanFile(bytes, offset);
  if (!bad.empty())
    throw RuntimeError(name + ": " + bad);
  plan::Plan p;
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
