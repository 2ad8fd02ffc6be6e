//===- StreamOrder.h - the CUDA streams and events of a rank -*- C++ -*-===//
//
// A rank's per-step stream of the plan (Rank.stream) on two kinds of CUDA
// streams: the compute stream runs FORWARD, BACKWARD and UPDATE; transfers
// run on communication streams, one per direction and peer ("send:1",
// "recv:1"), one for the DP reductions and one for the tied-parameter
// sync, so that a transfer overlaps the compute that does not need it and
// a send to one peer never queues behind a receive from another (NCCL
// sends block until their receiver is posted: one shared comm stream can
// deadlock two pipeline stages that each send before they receive).
//
// Between streams, order comes from CUDA events. The rules (why):
//  - a compute action of micro-batch m waits for every earlier RECV of m
//    (it reads what they bring);
//  - a SEND of micro-batch m waits for the latest earlier compute action
//    of m (the producer of what it sends), or the latest compute action
//    when no action of m came before;
//  - a RECV into a tensor shared by the micro-batches (a gradient, a
//    parameter) waits for the latest earlier compute action (which may
//    still read the previous value); a per-micro-batch RECV gets a fresh
//    buffer and waits for nothing;
//  - a BACKWARD or UPDATE waits for every earlier SEND of a shared tensor
//    (it may overwrite what is being sent; a FORWARD writes activations
//    only); a per-micro-batch tensor is
//    not overwritten: its buffer is freed after the send's event instead
//    (releaseAfter);
//  - REDUCE_GRADS and SYNC_PARAMS wait for the latest compute action;
//    UPDATE waits for every earlier REDUCE_GRADS;
//  - the host synchronises every stream at the end of a step (it reads the
//    loss), so no order crosses a step.
// An action never waits for an action of its own stream (stream order).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_HOST_STREAMORDER_H
#define FRENZY_RUNTIME_CUDA_HOST_STREAMORDER_H

#include "plan.pb.h"

#include <functional>
#include <string>
#include <vector>

namespace frenzy::rt::cuda {

struct OrderedAction {
  int action = 0;         // index into the rank's stream
  int stream = 0;         // index into StreamOrder::streams (0: compute)
  std::vector<int> waits; // actions whose completion events it waits for
  bool recordsEvent = false; // some other stream waits for it
  bool releaseAfter = false; // SEND: free the tensor after this event
};

struct StreamOrder {
  std::vector<std::string> streams; // [0] = "compute"
  std::vector<OrderedAction> actions;
  /// "F0 | S1:send:1 <- 0 | ..." (for tests and --verbose).
  std::string describe(const plan::Rank &rank) const;
};

/// `shared(tensor)`: the tensor is one buffer for all micro-batches of the
/// step (parameters, gradients) rather than one per micro-batch.
StreamOrder orderStreams(const plan::Rank &rank,
                         const std::function<bool(int32_t)> &shared);

} // namespace frenzy::rt::cuda

#endif
