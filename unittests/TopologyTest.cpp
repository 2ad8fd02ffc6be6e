//===- TopologyTest.cpp - links, rings and placement of a topology --------===//
//
// The Topology library on cluster files written here: link kinds and
// figures by rack and zone, pair overrides, the ring bottleneck, ring
// all-reduce time against its formula, rack-by-rack placement order, and
// the one-line errors of bad topology sections.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Cluster/Topology.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace frenzy;

namespace {

/// Writes `text` to a temporary cluster file and reads it.
llvm::Expected<ClusterSpec> read(const std::string &text) {
  llvm::SmallString<128> path;
  llvm::sys::fs::createTemporaryFile("topology", "yaml", path);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
  }
  auto spec = readClusterFile(path);
  llvm::sys::fs::remove(path);
  return spec;
}

std::string errorOf(const std::string &text) {
  auto spec = read(text);
  if (spec)
    return "";
  return llvm::toString(spec.takeError());
}

const char *kNodes = "network: {bandwidth_gbps: 80, latency_us: 20}\n"
                     "nodes:\n"
                     "  - {name: a0, gpu: A100-80G, count: 8, link: nvlink}\n"
                     "  - {name: b0, gpu: A100-80G, count: 8, link: nvlink}\n"
                     "  - {name: a1, gpu: A100-80G, count: 8, link: nvlink}\n"
                     "  - {name: c0, gpu: RTX3090, count: 8}\n";

const char *kRacks = "topology:\n"
                     "  links:\n"
                     "    intra_rack: {bandwidth_gbps: 200, latency_us: 5}\n"
                     "    inter_rack: {bandwidth_gbps: 16, latency_us: 50}\n"
                     "    inter_zone: {bandwidth_gbps: 8, latency_us: 900}\n"
                     "  racks:\n"
                     "    - {name: ra, zone: east, nodes: [a0, a1]}\n"
                     "    - {name: rb, zone: east, nodes: [b0]}\n"
                     "    - {name: rc, zone: west, nodes: [c0]}\n";

TEST(Topology, LinksByKind) {
  auto spec = read(std::string(kNodes) + kRacks);
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  Topology t(*spec);
  // Within a node: the node's own link (NVLink 300 GB/s, PCIe 25 GB/s).
  EXPECT_EQ(t.link(0, 0).kind, LinkKind::IntraNode);
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 0), 300e9);
  EXPECT_DOUBLE_EQ(t.bandwidth(3, 3), 25e9);
  EXPECT_EQ(t.link(0, 2).kind, LinkKind::IntraRack);
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 2), 200e9 / 8);
  EXPECT_DOUBLE_EQ(t.latency(0, 2), 5e-6);
  EXPECT_EQ(t.link(0, 1).kind, LinkKind::InterRack);
  EXPECT_DOUBLE_EQ(t.bandwidth(1, 0), 16e9 / 8);
  EXPECT_EQ(t.link(2, 3).kind, LinkKind::InterZone);
  EXPECT_DOUBLE_EQ(t.latency(2, 3), 900e-6);
  EXPECT_EQ(t.rackOf(2), 0);
  EXPECT_EQ(t.rackOf(3), 2);
}

TEST(Topology, WithoutTopologyEveryPairIsTheNetwork) {
  auto spec = read(kNodes);
  ASSERT_TRUE(bool(spec));
  Topology t(*spec);
  EXPECT_EQ(t.link(0, 3).kind, LinkKind::Network);
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 3), 10e9);
  EXPECT_DOUBLE_EQ(t.latency(1, 2), 20e-6);
  EXPECT_EQ(t.summary(), "");
  EXPECT_EQ(t.placementOrder({3, 0, 2}), (std::vector<int>{3, 0, 2}));
}

TEST(Topology, PairOverridesAndFullMatrix) {
  auto spec = read(std::string(kNodes) + kRacks +
                   "  pairs:\n"
                   "    - {nodes: [b0, a1], bandwidth_gbps: 400, latency_us: "
                   "2}\n");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  Topology t(*spec);
  EXPECT_EQ(t.link(2, 1).kind, LinkKind::Pair);
  EXPECT_DOUBLE_EQ(t.bandwidth(1, 2), 50e9);
  EXPECT_DOUBLE_EQ(t.latency(1, 2), 2e-6);
  EXPECT_EQ(t.link(0, 1).kind, LinkKind::InterRack); // other pairs unchanged
  // fastestBetween finds the override even when it is not a neighbour in
  // placement order.
  EXPECT_EQ(t.fastestBetween({0, 1, 2}).kind, LinkKind::Pair);
  // With pairs the ring is walked link by link: a0-a1 intra-rack, a1-b0
  // the fast pair, b0-a0 back over the slow inter-rack link.
  EXPECT_EQ(t.ringBottleneck({0, 1, 2}).kind, LinkKind::InterRack);
  EXPECT_EQ(t.ringBottleneck({1, 2}).kind, LinkKind::Pair);

  // Pairs only: a full matrix.
  auto full = read("nodes:\n  - {name: x, gpu: T4, count: 1}\n"
                   "  - {name: y, gpu: T4, count: 1}\n"
                   "topology:\n  pairs:\n"
                   "    - {nodes: [x, y], bandwidth_gbps: 40}\n");
  ASSERT_TRUE(bool(full)) << llvm::toString(full.takeError());
  Topology f(*full);
  EXPECT_DOUBLE_EQ(f.bandwidth(0, 1), 5e9);
  EXPECT_DOUBLE_EQ(f.latency(0, 1), 10e-6); // latency_us defaults to 10
}

TEST(Topology, RingIsLimitedByItsSlowestLink) {
  auto spec = read(std::string(kNodes) + kRacks);
  ASSERT_TRUE(bool(spec));
  Topology t(*spec);
  // One node: its own link.
  EXPECT_EQ(t.ringBottleneck({0}).kind, LinkKind::IntraNode);
  // One rack: the intra-rack link.
  EXPECT_EQ(t.ringBottleneck({2, 0}).kind, LinkKind::IntraRack);
  // Two racks of a zone: the inter-rack link (the ring crosses it).
  Link ab = t.ringBottleneck({0, 1, 2});
  EXPECT_EQ(ab.kind, LinkKind::InterRack);
  EXPECT_DOUBLE_EQ(ab.latencySeconds, 50e-6);
  // Across zones: the slowest link and the largest latency.
  Link all = t.ringBottleneck({3, 2, 1, 0});
  EXPECT_EQ(all.kind, LinkKind::InterZone);
  EXPECT_DOUBLE_EQ(all.latencySeconds, 900e-6);

  // 2(P-1)/P bytes over the bottleneck + its latency.
  double bytes = 1e9, eff = 0.8;
  double expect = 2.0 * 3 / 4 * bytes / (16e9 / 8 * eff) + 50e-6;
  EXPECT_NEAR(t.ringAllReduceSeconds({0, 1, 2}, 4, bytes, eff), expect,
              1e-12);
  EXPECT_EQ(t.ringAllReduceSeconds({0, 1}, 1, bytes, eff), 0);
  // A slower ring costs more for the same members and bytes.
  EXPECT_GT(t.ringAllReduceSeconds({0, 3}, 4, bytes, eff),
            t.ringAllReduceSeconds({0, 2}, 4, bytes, eff));
  // Point to point.
  EXPECT_NEAR(t.sendSeconds(0, 1, 2e6, 1.0), 2e6 / 2e9 + 50e-6, 1e-15);
}

TEST(Topology, PlacementKeepsRacksTogether) {
  auto spec = read(std::string(kNodes) + kRacks);
  ASSERT_TRUE(bool(spec));
  Topology t(*spec);
  // File order a0 b0 a1 c0; racks ra {a0, a1}, rb {b0}, rc {c0}.
  EXPECT_EQ(t.placementOrder({0, 1, 2, 3}), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(t.placementOrder({3, 1}), (std::vector<int>{1, 3}));
  // TP may span a1-a0 only if their link nears NVLink's: it does not here.
  EXPECT_FALSE(t.tensorParallelAcross(0, 2));
  EXPECT_TRUE(t.tensorParallelAcross(1, 1));
  EXPECT_NE(t.summary().find("3 rack(s) (ra in east: a0 a1; rb in east: b0; "
                             "rc in west: c0)"),
            std::string::npos)
      << t.summary();
}

TEST(Topology, BadInputIsOneLineWithFileLineAndField) {
  std::string nodes = kNodes; // topology starts at line 7
  auto err = [&](const std::string &topo) { return errorOf(nodes + topo); };
  std::string e = err("topology:\n  racks:\n"
                      "    - {name: ra, nodes: [a0, a1]}\n"
                      "    - {name: rb, nodes: [b0, a0]}\n"
                      "    - {name: rc, nodes: [c0]}\n");
  EXPECT_NE(e.find(":10:"), std::string::npos) << e;
  EXPECT_NE(e.find("racks.nodes: node 'a0' is already in rack 'ra'"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;

  e = err("topology:\n  links:\n    inter_rack: {bandwidth_gbps: 0}\n"
          "  racks:\n    - {name: ra, nodes: [a0, a1, b0, c0]}\n");
  EXPECT_NE(e.find(":9:"), std::string::npos) << e;
  // Only the first error: the later ones would follow from it.
  EXPECT_EQ(e.find(".yaml:", e.find(".yaml:") + 1), std::string::npos) << e;
  EXPECT_NE(e.find("bandwidth_gbps: must be a positive number of Gb/s, got '0'"), std::string::npos)
      << e;

  e = err("topology:\n  racks:\n    - {name: ra, nodes: [a0, a1, zz]}\n");
  EXPECT_NE(e.find("racks.nodes: unknown node 'zz'"), std::string::npos) << e;

  e = err("topology:\n  racks:\n    - {name: ra, nodes: [a0, a1, b0]}\n");
  EXPECT_NE(e.find("racks: node 'c0' is in no rack"), std::string::npos) << e;

  e = err("topology:\n  pairs:\n"
          "    - {nodes: [a0, b0], bandwidth_gbps: 10}\n");
  EXPECT_NE(e.find("pairs: no entry for nodes 'a0' and 'a1'"),
            std::string::npos)
      << e;

  e = err("topology:\n  racks:\n    - {name: ra, nodes: [a0, a1, b0, c0]}\n"
          "  pairs:\n    - {nodes: [a0, b0], bandwidth_gbps: 10}\n"
          "    - {nodes: [b0, a0], bandwidth_gbps: 20}\n");
  EXPECT_NE(e.find(":12:"), std::string::npos) << e;
  EXPECT_NE(e.find("listed twice"), std::string::npos) << e;

  e = err("topology:\n  racks:\n    - {name: ra, nodes: [a0, a1, b0, c0]}\n"
          "  pairs:\n    - {nodes: [a0, a0], bandwidth_gbps: -3}\n");
  EXPECT_NE(e.find("two different nodes"), std::string::npos) << e;
}

} // namespace

// Figures measured by frenzy-calibrate --cluster: a measured pair is used
// without the efficiency factor and, where it has times by size, at the
// time of the message's size (linear between sizes, from the latency below
// the first, at the bandwidth beyond the last); an all-reduce measured
// across exactly the ring's nodes replaces the ring's slowest link.
TEST(Topology, MeasuredPairsAndAllReduces) {
  auto spec = read(
      std::string(kNodes) +
      "topology:\n"
      "  racks:\n"
      "    - {name: r, nodes: [a0, b0, a1, c0]}\n"
      "  pairs:\n"
      "    - {nodes: [a0, b0], bandwidth_gbps: 8, latency_us: 10, measured: "
      "true, times: [{bytes: 1000, ms: 0.1}, {bytes: 2000, ms: 0.3}]}\n"
      "    - {nodes: [a0, a1], bandwidth_gbps: 8, latency_us: 10}\n"
      "  allreduce:\n"
      "    - nodes: [b0, a0]\n"
      "      bandwidth_gbps: 4\n"
      "      latency_us: 100\n"
      "      measured: true\n");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  Topology t(*spec);
  Link m = t.link(0, 1);
  EXPECT_TRUE(m.measured);
  ASSERT_TRUE(m.times);
  EXPECT_NEAR(m.seconds(1500, 0.5), 0.2e-3, 1e-12);  // between the sizes
  EXPECT_NEAR(m.seconds(500, 0.5), 10e-6 + 0.5 * (0.1e-3 - 10e-6), 1e-12);
  EXPECT_NEAR(m.seconds(3000, 0.5), 0.3e-3 + 1000 / 1e9, 1e-12); // 8 Gb/s
  // Nominal: the efficiency applies.
  Link n = t.link(0, 2);
  EXPECT_FALSE(n.measured);
  EXPECT_NEAR(t.sendSeconds(0, 2, 1e6, 0.5), 1e6 / 0.5e9 + 10e-6, 1e-12);
  // The measured all-reduce of {a0, b0}: bus 4 Gb/s, 100 us, no efficiency.
  ASSERT_TRUE(t.measuredAllReduce({1, 0, 1}));
  EXPECT_NEAR(t.ringAllReduceSeconds({0, 1}, 2, 1e6, 0.5), 1e6 / 0.5e9 + 100e-6,
              1e-12);
  // Other node sets: the ring over the links.
  EXPECT_FALSE(t.measuredAllReduce({0, 2}));
  EXPECT_NEAR(t.ringAllReduceSeconds({0, 2}, 2, 1e6, 0.5),
              1e6 / (1e9 * 0.5) + 10e-6, 1e-12);
}
