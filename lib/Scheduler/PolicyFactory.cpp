//===- PolicyFactory.cpp - policies by name -------------------------------===//
#include "Policies.h"

using namespace frenzy;
using namespace frenzy::sched;

std::unique_ptr<Policy> frenzy::sched::makePolicy(llvm::StringRef name,
                                                  const PolicyOptions &o) {
  if (name == "fifo")
    return makeFifoPolicy();
  if (name == "gavel")
    return makeGavelPolicy(o);
  if (name == "sia")
    return makeSiaPolicy(o);
  if (name == "frenzy")
    return o.realloc ? makeFrenzyPolicy(true) : makeAdaptivePolicy(o);
  if (name == "frenzy-static")
    return makeFrenzyPolicy(o.realloc);
  return nullptr;
}

std::unique_ptr<Policy> frenzy::sched::makePolicy(llvm::StringRef name,
                                                  bool realloc) {
  PolicyOptions o;
  o.realloc = realloc;
  return makePolicy(name, o);
}

const char *frenzy::sched::policyNames() {
  return "fifo, gavel, sia, frenzy, frenzy-static";
}
