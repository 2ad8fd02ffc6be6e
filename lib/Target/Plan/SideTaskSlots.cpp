//===- SideTaskSlots.cpp - side-task slots into the rank streams ----------===//
//
// frenzy-place-side-tasks records each slot by the main-stream work its
// bubble precedes ("F3", "B0", "reduce"). In a rank's stream that work is
// the phase's action together with the receives in front of it (the wait
// is the receive), so a slot goes before those receives, after any slot
// already placed in the same bubble: slots keep their time order.
//
//===----------------------------------------------------------------------===//
#include "PlanParts.h"

#include "frenzy/Dialect/Frenzy/Transforms/SideTaskAttrs.h"

#include <algorithm>

using namespace mlir;
using namespace frenzy;
using namespace frenzy::target;

/// Index in `stream` of the first action of the work `before` names, or
/// -1.
static int positionOf(const std::vector<plan::Action> &stream,
                      StringRef before) {
  int n = int(stream.size()), at = -1;
  if (before == "reduce") {
    for (int i = 0; i < n && at < 0; ++i)
      if (stream[size_t(i)].kind() == plan::Action::REDUCE_GRADS)
        at = i;
  } else {
    int64_t mb;
    bool backward = before.starts_with("B");
    if (!(backward || before.starts_with("F")) ||
        before.drop_front().getAsInteger(10, mb))
      return -1;
    auto kind = backward ? plan::Action::BACKWARD : plan::Action::FORWARD;
    for (int i = 0; i < n && at < 0; ++i)
      if (stream[size_t(i)].kind() == kind &&
          stream[size_t(i)].micro_batch() == mb)
        at = i;
    while (at > 0 && stream[size_t(at - 1)].kind() == plan::Action::RECV)
      --at;
  }
  if (at < 0)
    return -1;
  while (at < n && stream[size_t(at)].kind() == plan::Action::SIDE_TASK)
    ++at;
  return at;
}

LogicalResult target::placeSideTaskSlots(ModuleOp module, PlacedPlan &placed,
                                         std::vector<plan::SideTask> &tasks,
                                         double &gpuSeconds) {
  auto rec = readSideTasks(module);
  if (failed(rec))
    return failure();
  if (!*rec)
    return success();
  for (const RecordedSideTask &t : (*rec)->tasks) {
    plan::SideTask &pt = tasks.emplace_back();
    pt.set_name(t.name);
    pt.set_kind(t.kind);
    pt.set_memory_bytes(t.memoryBytes);
    pt.set_steps(t.steps);
    pt.set_priority(t.priority);
  }
  gpuSeconds = (*rec)->gpuSeconds;
  std::vector<const RecordedSlot *> slots;
  for (const RecordedSlot &s : (*rec)->slots)
    slots.push_back(&s);
  std::stable_sort(slots.begin(), slots.end(),
                   [](auto *a, auto *b) { return a->start < b->start; });
  for (const RecordedSlot *s : slots) {
    bool found = false;
    for (int32_t r = 0; r < placed.ranks; ++r) {
      const StageWork &sw = *placed.stageOf[size_t(r)];
      if (sw.pipeline != s->pipeline || sw.index != s->stage)
        continue;
      found = true;
      std::vector<plan::Action> &stream = placed.streams[size_t(r)];
      int at = positionOf(stream, s->before);
      if (at < 0)
        return emitError(module.getLoc())
               << kSideTasksAttrName << ": a slot of pipeline " << s->pipeline
               << " stage " << s->stage << " comes before '" << s->before
               << "', which rank " << r
               << "'s stream does not have; run frenzy-place-side-tasks "
                  "after the schedule it was made for";
      plan::Action a;
      a.set_kind(plan::Action::SIDE_TASK);
      a.set_predicted_start(s->start);
      plan::SideTaskSlot &slot = *a.mutable_side_task();
      slot.set_task(int32_t(s->task));
      slot.set_start(s->start);
      slot.set_duration(s->seconds);
      slot.set_steps(s->steps);
      slot.set_memory_bytes(s->memoryBytes);
      stream.insert(stream.begin() + at, std::move(a));
    }
    if (!found)
      return emitError(module.getLoc())
             << kSideTasksAttrName << ": a slot names pipeline " << s->pipeline
             << " stage " << s->stage << ", which the plan has no rank for";
  }
  return success();
}
