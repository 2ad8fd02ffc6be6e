//===- CommPlan.h - which ranks form which communicator ---------*- C++ -*-===//
//
// The communicators of a plan for the CUDA backend, decided before any
// NCCL call so that every rank derives the same list in the same order
// (the order in which communicators are created and their ncclUniqueIds
// exchanged over MPI):
//  - one per TP, DP and TIED group of Plan.groups with two or more ranks,
//    in the plan's order; the NCCL rank of a member is its index in the
//    group's ranks;
//  - one per directed pipeline edge (a rank that SENDs to a peer), sorted
//    by (sender, receiver): a 2-rank communicator per direction keeps the
//    sends of one edge from queueing behind the receives of the other.
//
// NCCL refuses a communicator in which two ranks use the same GPU, and a
// rank on the CPU backend has no GPU at all. Such a communicator uses the
// MPI fallback instead: device buffers are staged through host memory and
// moved with the same MPI calls as the CPU backend (slower, same values).
// This is how several ranks share one GPU in tests (--share-gpus).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_HOST_COMMPLAN_H
#define FRENZY_RUNTIME_CUDA_HOST_COMMPLAN_H

#include "plan.pb.h"

#include <string>
#include <vector>

namespace frenzy::rt::cuda {

enum class Transport { Nccl, Mpi };

struct CommSpec {
  enum Kind { TP, DP, TIED, P2P };
  Kind kind = TP;
  std::vector<int32_t> ranks; // P2P: {sender, receiver}
  int group = -1;             // index into Plan.groups; -1 for P2P
  Transport transport = Transport::Nccl;
  std::string why; // MPI: the reason, for the log
  /// "TP[2,3]", "DP[0,2]", "TIED[0,1]", "P2P 0->1".
  std::string name() const;
  /// The member's index (its NCCL rank), or -1 when not a member.
  int indexOf(int32_t rank) const;
};

/// `gpuOf[r]`: the physical GPU of world rank r as the ranks reported it
/// (host name and PCI bus id; "" for a rank on the CPU backend). Throws
/// RuntimeError for a group that names a rank twice or a rank outside the
/// plan.
std::vector<CommSpec> planCommunicators(const plan::Plan &plan,
                                        const std::vector<std::string> &gpuOf);

} // namespace frenzy::rt::cuda

#endif
