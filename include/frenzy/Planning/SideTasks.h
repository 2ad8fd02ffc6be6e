//===- SideTasks.h - side tasks and their placement into bubbles -*- C++ -*-=//
//
// Side tasks are work that runs on a training job's GPUs while they would
// otherwise idle in pipeline bubbles (docs/sidetasks.md). This header has
// the task description (read from a YAML file), the placement problem
// (bubbles, each stage's GPU type and step time per task, margins) with
// check(), the greedy solver, and verify() for any solution. MLIR-free: the
// frenzy-place-side-tasks pass fills the problem from the IR.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PLANNING_SIDETASKS_H
#define FRENZY_PLANNING_SIDETASKS_H

#include "frenzy/Analysis/Bubbles/Bubbles.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace frenzy::sidetasks {

struct SideTask {
  enum Kind { StepFunction, Process };
  std::string name;
  Kind kind = StepFunction;
  /// Work of one step for the cost model (either may be 0).
  double flops = 0, bytes = 0;
  /// Measured seconds of one step, by GPU type (wins over flops/bytes).
  std::map<std::string, double> secondsOn;
  int64_t memoryBytes = 0; // working set on the GPU while it runs
  int64_t steps = -1;      // per training step at most; -1: unbounded
  int64_t priority = 0;    // higher is placed first
  int line = 0;            // where the file describes it
};

llvm::StringRef kindName(SideTask::Kind k);

/// Reads a side-task file. Errors are one line: "FILE:LINE: field 'F':
/// what is wrong; what to do".
llvm::Expected<std::vector<SideTask>> readSideTaskFile(llvm::StringRef path);
llvm::Expected<std::vector<SideTask>> parseSideTasks(llvm::StringRef text,
                                                     llvm::StringRef fileName);

/// The placement problem: the bubbles of one training step (they recur
/// every step), the tasks, and each task's step time on each stage's GPU
/// type (nullopt: no measurement for that type and no flops/bytes).
struct PlacementProblem {
  const bubbles::ScheduleProblem *schedule = nullptr;
  const bubbles::BubbleAnalysis *analysis = nullptr;
  std::vector<SideTask> tasks;
  /// [task][pipeline][stage]
  std::vector<std::vector<std::vector<std::optional<double>>>> stepSeconds;
  /// Memory kept free beside a task: this share of the GPU's capacity.
  double memoryMargin = 0.1;
  /// Time kept free at a bubble's end: this share of the bubble.
  double timeMargin = 0.05;
  llvm::Error check() const;
};

/// One slot: `task` runs on every GPU of a stage from `start` (seconds from
/// the step's start) for `seconds`, doing `steps` steps (a process: as many
/// as it gets through), inside bubble `bubble` (index into the analysis).
struct Slot {
  int task = 0, bubble = 0;
  int pipeline = 0, stage = 0;
  double start = 0, seconds = 0;
  int64_t steps = 0;
  int64_t memoryBytes = 0;
  std::string before; // the work that follows the bubble
};

struct Placement {
  std::vector<Slot> slots; // by task, then time
  /// Per task: GPU-seconds of its work per training step (all GPUs of the
  /// stages it runs on), steps per training step, and, when nothing or
  /// not all was placed, why.
  std::vector<double> taskGpuSeconds;
  std::vector<int64_t> taskSteps;
  std::vector<std::string> why;
  double gpuSeconds = 0; // harvested per training step, in total
};

/// Greedy: tasks by priority (highest first, the file's order among
/// equals), each first-fit into the bubbles in stage and time order, as
/// many steps as fit each bubble's remaining time (less the time margin)
/// where its memory fits the free memory less the margin.
Placement placeGreedy(const PlacementProblem &problem);

/// A placement is valid: every slot lies inside its bubble (with the time
/// margin), slots in one bubble do not overlap, a task's memory fits the
/// bubble's free memory less the margin, steps fit the slot's time, and no
/// task runs more steps than it asks for.
llvm::Error verify(const PlacementProblem &problem, const Placement &p);

/// Harvested time per stage and in total, and the tasks that did not fit.
void printPlacement(const PlacementProblem &problem, const Placement &p,
                    llvm::raw_ostream &os);

} // namespace frenzy::sidetasks

#endif
