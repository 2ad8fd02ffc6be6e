//===- LostRanksTest.cpp - which ranks and nodes a stopped job lost -------===//
#include "LostRanks.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

using namespace frenzy::elastic;

namespace {

/// n0: ranks 0, 1; n1: ranks 2, 3; n2: rank 4 (device indices per node).
PlanInfo threeNodes() {
  PlanInfo p;
  p.rankNode = {"n0", "n0", "n1", "n1", "n2"};
  p.rankDevice = {0, 1, 0, 1, 0};
  p.namesHosts = true;
  return p;
}

const Membership kFile = {{"n0", 2}, {"n1", 2}, {"n2", 1}};

std::string statusDir(const std::vector<std::string> &states) {
  char tmpl[] = "/tmp/lostranks-test.XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  for (size_t r = 0; r < states.size(); ++r)
    if (!states[r].empty())
      std::ofstream(dir + "/rank-" + std::to_string(r))
          << "rank " << r << " pid " << 100 + r << " host h step 6 state "
          << states[r] << "\n";
  return dir;
}

TEST(LostRanks, SilentAreTheRanksStillRunning) {
  // `ended` (SIGTERM), `failed` (own error), `done` are not lost; a missing
  // or unreadable file says nothing either way.
  std::string dir =
      statusDir({"ended", "running", "failed", "starting", "", "done"});
  std::ofstream(dir + "/rank-4") << "rank 4 pid";
  EXPECT_EQ(silentRanks(dir, 6), (std::vector<int>{1, 3}));
  std::system(("rm -rf " + dir).c_str());
}

TEST(LostRanks, OneRankTakesItsDevice) {
  PlanInfo p = threeNodes();
  Loss l;
  l.plan = &p;
  l.ranks = {3};
  EXPECT_TRUE(l.wholeNodes().empty());
  EXPECT_EQ(l.devices(p, kFile), (std::map<std::string, int>{{"n1", 1}}));
  EXPECT_EQ(l.describe(p, 9), "rank 3 (n1, device 1) died (signal 9)");
}

TEST(LostRanks, EveryRankOfANodeTakesTheNode) {
  PlanInfo p = threeNodes();
  Loss l;
  l.plan = &p;
  l.ranks = {2, 3, 0};
  EXPECT_EQ(l.wholeNodes(), (std::vector<std::string>{"n1"}));
  EXPECT_EQ(l.devices(p, kFile),
            (std::map<std::string, int>{{"n0", 1}, {"n1", 2}}));
  EXPECT_EQ(l.describe(p, 0), "node n1 lost: ranks 2, 3 (all of its ranks) "
                              "died; rank 0 (n0, device 0) died");
}

TEST(LostRanks, AnUnreachableNodeLeavesWholeWithItsSilentRanks) {
  PlanInfo p = threeNodes();
  Loss l;
  l.plan = &p;
  l.ranks = {3};
  l.unreachable = {{"n1", "(host 10.0.0.2) answered but cannot reach"}};
  EXPECT_EQ(l.wholeNodes(), (std::vector<std::string>{"n1"}));
  EXPECT_EQ(l.devices(p, kFile), (std::map<std::string, int>{{"n1", 2}}));
  EXPECT_EQ(l.describe(p, 0), "node n1 lost: it does not answer (host "
                              "10.0.0.2) answered but cannot reach");
}

TEST(LostRanks, ProbeReadsTheNodesFromFrenzyLaunchsLines) {
  // A stand-in for `frenzy-launch PLAN --probe-nodes`: its error lines,
  // and the options it was given, are what the supervisor reads.
  char tmpl[] = "/tmp/lostranks-probe.XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::string fake = dir + "/frenzy-launch";
  std::ofstream(fake)
      << "#!/bin/sh\n"
         "echo \"$*\" > \"$(dirname \"$0\")/args\"\n"
         "echo \"frenzy-launch: error: node 'n2' (host 10.0.0.3) did not "
         "answer through the launch agent 'a' within 1 s\" >&2\n"
         "exit 1\n";
  std::system(("chmod +x " + fake).c_str());
  auto got = probeNodes(fake, "p.bin",
                        {"--launch-agent=a b", "--steps=3", "--launch-timeout=1"},
                        5);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "n2");
  EXPECT_EQ(got[0].second, "(host 10.0.0.3) did not answer through the launch "
                           "agent 'a' within 1 s");
  // Only the launch options travel (the probe needs no --steps).
  std::string args;
  std::getline(std::ifstream(dir + "/args"), args);
  EXPECT_EQ(args, "p.bin --probe-nodes --launch-agent=a b --launch-timeout=1");
  std::system(("rm -rf " + dir).c_str());
}

} // namespace
