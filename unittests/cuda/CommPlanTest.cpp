//===- CommPlanTest.cpp - NCCL communicators and the MPI fallback ---------===//
#include "CommPlan.h"
#include "Tensor.h"

#include <gtest/gtest.h>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

void addGroup(plan::Plan &p, plan::CommGroup::Kind k,
              std::vector<int32_t> ranks) {
  plan::CommGroup *g = p.add_groups();
  g->set_kind(k);
  for (int32_t r : ranks)
    g->add_ranks(r);
}

void addSend(plan::Plan &p, int from, int to, int tensor) {
  plan::Action *a = p.mutable_ranks(from)->add_stream();
  a->set_kind(plan::Action::SEND);
  a->set_peer(to);
  a->set_tensor(tensor);
}

/// 4 ranks: pipeline 0 = stages {0} and {1, 2} (TP 2), pipeline 1 = {3}.
plan::Plan fourRanks() {
  plan::Plan p;
  for (int i = 0; i < 4; ++i)
    p.add_ranks()->set_id(i);
  addGroup(p, plan::CommGroup::TP, {1, 2});
  addGroup(p, plan::CommGroup::DP, {0, 3});
  addGroup(p, plan::CommGroup::DP, {1, 3});
  addGroup(p, plan::CommGroup::TIED, {0, 2});
  addGroup(p, plan::CommGroup::TP, {3}); // a group of one: nothing
  addSend(p, 0, 1, 71);
  addSend(p, 0, 2, 71);
  addSend(p, 1, 0, 174);
  addSend(p, 0, 1, 72); // a second tensor on the same edge
  return p;
}

std::vector<std::string> names(const std::vector<CommSpec> &cs) {
  std::vector<std::string> out;
  for (const CommSpec &c : cs)
    out.push_back(c.name() +
                  (c.transport == Transport::Mpi ? " mpi" : " nccl"));
  return out;
}

TEST(CommPlan, OneCommunicatorPerGroupAndDirectedEdge) {
  auto cs = planCommunicators(fourRanks(), {"n0/a", "n0/b", "n0/c", "n1/a"});
  EXPECT_EQ(names(cs),
            (std::vector<std::string>{"TP[1,2] nccl", "DP[0,3] nccl",
                                      "DP[1,3] nccl", "TIED[0,2] nccl",
                                      "P2P 0->1 nccl", "P2P 0->2 nccl",
                                      "P2P 1->0 nccl"}));
  EXPECT_EQ(cs[0].group, 0);
  EXPECT_EQ(cs[3].group, 3);
  EXPECT_EQ(cs[4].group, -1);
  EXPECT_EQ(cs[1].indexOf(3), 1); // NCCL rank = index in the group
  EXPECT_EQ(cs[1].indexOf(1), -1);
}

TEST(CommPlan, SharedGpuFallsBackToMpiForThoseGroupsOnly) {
  // Ranks 1 and 2 on one GPU (--share-gpus on a one-GPU machine).
  auto cs = planCommunicators(fourRanks(), {"n0/a", "n0/b", "n0/b", "n1/a"});
  EXPECT_EQ(names(cs),
            (std::vector<std::string>{"TP[1,2] mpi", "DP[0,3] nccl",
                                      "DP[1,3] nccl", "TIED[0,2] nccl",
                                      "P2P 0->1 nccl", "P2P 0->2 nccl",
                                      "P2P 1->0 nccl"}));
  EXPECT_EQ(cs[0].why, "ranks 1 and 2 share GPU n0/b (NCCL needs one GPU "
                       "per rank)");
}

TEST(CommPlan, AllOnOneGpuIsAllMpi) {
  auto cs = planCommunicators(fourRanks(), {"g", "g", "g", "g"});
  for (const CommSpec &c : cs)
    EXPECT_EQ(c.transport, Transport::Mpi) << c.name();
}

TEST(CommPlan, CpuRankUsesMpi) {
  auto cs = planCommunicators(fourRanks(), {"n0/a", "n0/b", "n0/c", ""});
  EXPECT_EQ(cs[1].transport, Transport::Mpi);
  EXPECT_EQ(cs[1].why, "rank 3 runs on the CPU backend");
  EXPECT_EQ(cs[0].transport, Transport::Nccl);
}

TEST(CommPlan, BadGroupsAreOneLineErrors) {
  plan::Plan p = fourRanks();
  p.mutable_groups(1)->add_ranks(0);
  try {
    planCommunicators(p, {"a", "b", "c", "d"});
    FAIL();
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "plan: group 1 lists rank 0 twice; re-emit the "
                           "plan with frenzy-opt");
  }
  p = fourRanks();
  addSend(p, 2, 9, 1);
  EXPECT_THROW(planCommunicators(p, {"a", "b", "c", "d"}), RuntimeError);
  EXPECT_THROW(planCommunicators(fourRanks(), {"a"}), RuntimeError);
}

} // namespace
