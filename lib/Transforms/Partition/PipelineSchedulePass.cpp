//===- PipelineSchedulePass.cpp - the frenzy-pipeline-schedule pass -------===//
//
// Turns the recorded partition into the order each stage runs its
// micro-batches' forwards and backwards. Only the order lives in the IR:
// which tensors cross stages is known once the step is lowered, so the
// plan writer adds the sends and receives around these phases.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/PartitionAttrs.h"
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h"

namespace frenzy {
#define GEN_PASS_DEF_FRENZYPIPELINESCHEDULE
#include "frenzy/Dialect/Frenzy/Transforms/Passes.h.inc"
} // namespace frenzy

using namespace mlir;
using namespace frenzy;

namespace {
struct FrenzyPipelineSchedulePass
    : frenzy::impl::FrenzyPipelineScheduleBase<FrenzyPipelineSchedulePass> {
  using FrenzyPipelineScheduleBase::FrenzyPipelineScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<PipelineSchedule> k = parseScheduleName(kind);
    if (!k) {
      emitError(module.getLoc(), "unknown --schedule '")
          << kind << "'; valid values: 1f1b, gpipe";
      return signalPassFailure();
    }
    auto rec = readPartition(module);
    if (failed(rec))
      return signalPassFailure();
    if (!*rec) {
      emitError(module.getLoc(), "frenzy-pipeline-schedule needs the module's ")
          << kLayoutAttrName << ": run frenzy-partition first";
      return signalPassFailure();
    }
    // GPipe that the partition found not to fit (its schedule note) falls
    // back to 1F1B, whose memory the plan was checked under.
    if (*k == PipelineSchedule::GPipe && !(*rec)->plan.gpipe &&
        !(*rec)->plan.scheduleNote.empty())
      k = PipelineSchedule::OneFOneB;
    if (failed(recordSchedule(module, scheduleOrders((*rec)->plan, *k),
                              (*rec)->plan)))
      signalPassFailure();
  }
};
} // namespace
