//===- FifoPolicy.cpp - FIFO with first-fit and fixed user requests -------===//
//
// The baseline most shared clusters run: jobs start strictly in arrival
// order, each on exactly the GPUs its user asked for, on the first GPU type
// (in cluster-file order) with that many free GPUs, nodes taken first-fit.
// No backfilling: a head job that does not fit blocks everyone behind it.
// A job never moves once started.
//
//===----------------------------------------------------------------------===//
#include "Policies.h"

using namespace frenzy;
using namespace frenzy::sched;

namespace {

class FifoPolicy : public Policy {
public:
  const char *name() const override { return "fifo"; }
  void schedule(SimContext &ctx) override {
    for (int j : ctx.active()) {
      SimJob &job = ctx.jobs()[j];
      if (job.state != SimJob::State::Waiting)
        continue;
      bool started = false;
      for (const JobOption &o : job.userOptions)
        if ((started = ctx.start(j, o, Fit::FirstFit)))
          break;
      if (!started)
        return; // head-of-line blocking
    }
  }
};

} // namespace

std::unique_ptr<Policy> frenzy::sched::makeFifoPolicy() {
  return std::make_unique<FifoPolicy>();
}
