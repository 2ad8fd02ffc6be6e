//===- PlanFuzzer.cpp - fuzz the plan loader, validator and executor ------===//
//
// Odd first byte: the rest is a whole plan.bin (the framing checks). Even:
// the rest is a plan's protobuf payload, framed with a correct header here,
// so the fuzzer reaches the validator rather than the checksum. A plan the
// validator accepts is then run: its executor is built and one step runs
// on zero weights and inputs (one-rank plans of at most 64 MiB of tensors;
// multi-rank plans need MPI and are only validated). Refusals are
// RuntimeErrors; anything else (a crash, a sanitizer report, another
// exception) is a finding.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "PlanLoader.h"
#include "plan/PlanFile.h"

#include <string>

using namespace frenzy;

static int64_t programBytes(const plan::Program &p) {
  int64_t total = 0;
  for (const plan::Tensor &t : p.tensors()) {
    int64_t n = 8; // validated: cannot overflow
    for (int64_t d : t.shape())
      n *= d;
    total += n;
  }
  return total;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string rest(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::string bytes = (data[0] & 1) ? rest : plan::encodePlanFile(rest);
  try {
    plan::Plan p = rt::loadPlanBytes(bytes, "fuzz.plan");
    if (p.ranks_size() > 1 || programBytes(p.program()) > (64 << 20) ||
        p.program().instrs_size() > 5000)
      return 0;
    rt::Executor ex(p);
    ex.runStep(1, 0);
  } catch (const rt::RuntimeError &) {
  }
  return 0;
}
