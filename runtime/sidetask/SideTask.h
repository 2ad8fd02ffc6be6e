//===- SideTask.h - work that runs in a pipeline's bubbles ------*- C++ -*-===//
//
// A side task (issue 14, docs/sidetasks.md) is work that frenzy-launch runs
// on a rank while the rank's main stream would otherwise wait: in the slots
// frenzy-opt placed into the plan's bubbles, or in front of a receive that
// has not arrived yet. The host (SideTaskHost.h) drives a task through this
// interface and decides when it may run; a task never decides that itself.
//
// Two kinds, as in the side-task file: an iterative task does its work in
// step() calls, each short next to a bubble; a preemptible process runs by
// itself between resume() and pause() (a child process the host stops and
// continues), and step() is not called for it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_SIDETASK_H
#define FRENZY_RUNTIME_SIDETASK_SIDETASK_H

#include <cstdint>
#include <string>

namespace frenzy::rt {

class SideTask {
public:
  virtual ~SideTask() = default;
  virtual std::string name() const = 0;
  /// Prepares the task to run within `memoryBudget` bytes (0: no budget
  /// given). Throws (any std::exception) when it cannot.
  virtual void init(int64_t memoryBudget) = 0;
  /// One unit of work. Returns false once the task has done all of its
  /// work (then it is finished and not stepped again). May throw: the host
  /// catches it, reports the task as failed and goes on without it.
  virtual bool step() = 0;
  /// Stops and continues the task between slots. An iterative task keeps
  /// its state in memory, so for it these only mark the slot's edges.
  virtual void pause() {}
  virtual void resume() {}
  /// Releases what the task holds; called once, also after a failure.
  virtual void finish() = 0;
  /// Bytes the task holds now (its working set), checked against its
  /// budget after every step.
  virtual int64_t bytesInUse() const = 0;
  /// What the task achieved so far, in its own terms ("residual 3e-9").
  virtual std::string progress() const { return ""; }

  /// True for a preemptible process (runs by itself while resumed).
  virtual bool preemptible() const { return false; }
  /// For a preemptible process: "" while it is alive or exited cleanly
  /// (then finished() says so), else why it failed (a signal, a non-zero
  /// exit). Throws nothing.
  virtual std::string poll() { return ""; }
  virtual bool finished() const { return false; }
};

} // namespace frenzy::rt

#endif
