//===- MembershipTest.cpp - frenzy-elastic's cluster file handling --------===//
#include "Membership.h"

#include <gtest/gtest.h>

using namespace frenzy::elastic;

namespace {

const char *kTwoNodes = R"(# two nodes
name: lab
network:
  bandwidth_gbps: 100
nodes:
  - name: n0
    gpu: cpu
    count: 2   # the first node
  - name: "n1"
    gpu: cpu
    count: 2
    link: pcie
topology:
  racks:
    - name: r
      nodes: [n0, n1]
)";

TEST(Membership, ReadsBlockEntries) {
  ClusterFile f = ClusterFile::parse(kTwoNodes, "c.yaml");
  Membership m = f.membership();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], (std::pair<std::string, int>{"n0", 2}));
  EXPECT_EQ(m[1], (std::pair<std::string, int>{"n1", 2}));
  EXPECT_EQ(f.nodes()[1].gpu, "cpu");
  EXPECT_EQ(describe(m), "n0:2 n1:2 (4 devices)");
}

TEST(Membership, ReadsFlowEntries) {
  ClusterFile f = ClusterFile::parse(
      "nodes:\n- {name: a, gpu: A100-80G, count: 8}\n- {name: b, gpu: cpu, "
      "count: 1}\nname: x\n",
      "c.yaml");
  EXPECT_EQ(describe(f.membership()), "a:8 b:1 (9 devices)");
}

TEST(Membership, DerivesFewerDevices) {
  ClusterFile f = ClusterFile::parse(kTwoNodes, "c.yaml");
  std::string d = f.derive({{"n0", 2}, {"n1", 1}});
  // Only the count changes; the comment and other fields stay.
  EXPECT_NE(d.find("    count: 1\n    link: pcie"), std::string::npos) << d;
  EXPECT_NE(d.find("count: 2   # the first node"), std::string::npos) << d;
  EXPECT_EQ(describe(ClusterFile::parse(d, "d").membership()),
            "n0:2 n1:1 (3 devices)");
}

TEST(Membership, DropsNodeAndItsRackEntry) {
  ClusterFile f = ClusterFile::parse(kTwoNodes, "c.yaml");
  std::string d = f.derive({{"n0", 2}, {"n1", 0}});
  EXPECT_EQ(d.find("n1"), std::string::npos) << d;
  EXPECT_NE(d.find("nodes: [n0]"), std::string::npos) << d;
  EXPECT_NE(d.find("topology:"), std::string::npos) << d;
  EXPECT_EQ(describe(ClusterFile::parse(d, "d").membership()),
            "n0:2 (2 devices)");
}

TEST(Membership, Differences) {
  bool grew, shrank;
  Membership a = {{"n0", 2}}, b = {{"n0", 2}, {"n1", 2}};
  EXPECT_EQ(difference(a, b, &grew, &shrank), "+n1:2");
  EXPECT_TRUE(grew);
  EXPECT_FALSE(shrank);
  EXPECT_EQ(difference(b, without(b, {{"n1", 1}}), &grew, &shrank), "-n1:1");
  EXPECT_FALSE(grew);
  EXPECT_TRUE(shrank);
  EXPECT_EQ(difference(b, b, &grew, &shrank), "");
  EXPECT_EQ(deviceCount(without(a, {{"n0", 5}})), 0);
}

TEST(Membership, BadFilesNameTheLine) {
  auto error = [](const char *text) {
    try {
      ClusterFile::parse(text, "c.yaml");
    } catch (const ElasticError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("name: x\n"),
            "c.yaml: no 'nodes:' list; a cluster file lists its nodes "
            "(examples/cpu-4.yaml)");
  EXPECT_EQ(error("nodes:\n  - name: a\n    count: two\n"),
            "c.yaml:3: node 'a': 'count' must be a whole number of devices "
            ">= 1, not 'two'");
  EXPECT_EQ(error("nodes:\n  - name: a\n    gpu: cpu\n"),
            "c.yaml:2: node 'a' has no 'count'");
  EXPECT_EQ(error("nodes:\n  - {name: a, count: 1}\n  - {name: a, count: 2}\n"),
            "c.yaml:3: node 'a' is listed twice");
  EXPECT_EQ(error("nodes:\n  - name: a\n    count: 0\n"),
            "c.yaml:3: node 'a': 'count' must be a whole number of devices "
            ">= 1, not '0'");
}

TEST(Membership, EmptyListHasNoDevices) {
  ClusterFile f = ClusterFile::parse("nodes:\nname: x\n", "c.yaml");
  EXPECT_EQ(deviceCount(f.membership()), 0);
  EXPECT_EQ(deviceCount(ClusterFile::parse("nodes: []\n", "c").membership()),
            0);
}

} // namespace
