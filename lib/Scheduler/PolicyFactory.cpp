//===- PolicyFactory.cpp - policies by name -------------------------------===//
#include "Policies.h"

using namespace frenzy;
using namespace frenzy::sched;

std::unique_ptr<Policy> frenzy::sched::makePolicy(llvm::StringRef name,
                                                  bool realloc) {
  if (name == "fifo")
    return makeFifoPolicy();
  if (name == "gavel")
    return makeGavelPolicy();
  if (name == "sia")
    return makeSiaPolicy();
  if (name == "frenzy")
    return makeFrenzyPolicy(realloc);
  return nullptr;
}

const char *frenzy::sched::policyNames() { return "fifo, gavel, sia, frenzy"; }
