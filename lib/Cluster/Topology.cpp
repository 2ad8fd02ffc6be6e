//===- Topology.cpp - links between the nodes of a cluster ----------------===//
#include "frenzy/Cluster/Topology.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <numeric>

using namespace frenzy;

/// NCCL's small-message latency inside a node (NVLink or PCIe), the same
/// figure as Efficiency::collectiveLatency.
static constexpr double kIntraNodeLatency = 10e-6;

llvm::StringRef frenzy::linkKindName(LinkKind k) {
  switch (k) {
  case LinkKind::IntraNode:
    return "intra-node";
  case LinkKind::Network:
    return "network";
  case LinkKind::IntraRack:
    return "intra-rack";
  case LinkKind::InterRack:
    return "inter-rack";
  case LinkKind::InterZone:
    return "inter-zone";
  case LinkKind::Pair:
    return "node pair";
  }
  return "?";
}

static Link fromFigure(const LinkFigure &f, LinkKind kind) {
  return {f.bandwidthGbps / 8.0 * 1e9, f.latencyUs * 1e-6, kind};
}

static uint64_t pairKey(int a, int b) {
  return (uint64_t(std::min(a, b)) << 32) | uint64_t(std::max(a, b));
}

static std::vector<std::string> nodeNamesOf(const ClusterSpec &c) {
  std::vector<std::string> r;
  for (const ClusterNode &n : c.nodes)
    r.push_back(n.name);
  return r;
}

static std::vector<double> nodeLinksOf(const ClusterSpec &c) {
  std::vector<double> r;
  for (const ClusterNode &n : c.nodes)
    r.push_back(n.bandwidthGBs());
  return r;
}

Topology::Topology(const ClusterSpec &c)
    : Topology(nodeNamesOf(c), nodeLinksOf(c),
               {c.network.bandwidthGbps, c.network.latencyUs}, c.topology) {}

Topology::Topology(std::vector<std::string> nodeNames,
                   std::vector<double> nodeLinkGBs, LinkFigure net,
                   TopologySpec spec)
    : names(std::move(nodeNames)), network(net), topo(std::move(spec)) {
  for (double g : nodeLinkGBs)
    nodeLink.push_back(g * 1e9);
  const TopologySpec &t = topo;
  llvm::StringMap<int> index;
  for (size_t i = 0; i < names.size(); ++i)
    index[names[i]] = int(i);
  if (!t.racks.empty()) {
    rack.assign(names.size(), -1);
    llvm::StringMap<int> zones;
    for (size_t r = 0; r < t.racks.size(); ++r) {
      zone.push_back(zones.try_emplace(t.racks[r].zone, int(zones.size()))
                         .first->second);
      for (const std::string &n : t.racks[r].nodes)
        if (index.count(n))
          rack[index[n]] = int(r);
    }
  }
  auto timesOf = [](const std::vector<SizeSeconds> &times) {
    return times.empty()
               ? nullptr
               : std::make_shared<const std::vector<SizeSeconds>>(times);
  };
  for (const NodePairSpec &p : t.pairs)
    if (index.count(p.a) && index.count(p.b)) {
      Link l = fromFigure(p.link, LinkKind::Pair);
      l.measured = p.measured;
      l.times = timesOf(p.times);
      pairs[pairKey(index[p.a], index[p.b])] = l;
    }
  for (const AllReduceSpec &a : t.allReduces) {
    std::vector<int> nodes;
    for (const std::string &n : a.nodes)
      if (index.count(n))
        nodes.push_back(index[n]);
    std::sort(nodes.begin(), nodes.end());
    Link l = fromFigure(a.bus, LinkKind::Pair);
    l.measured = a.measured;
    l.times = timesOf(a.times);
    allReduces.emplace_back(std::move(nodes), l);
  }
}

double Link::seconds(double bytes, double eff, double factor) const {
  double rate = bytesPerSecond * efficiency(eff);
  if (!times || times->empty())
    return factor * bytes / rate + latencySeconds;
  const std::vector<SizeSeconds> &t = *times;
  // Linear between the measured sizes; below the first, from the latency;
  // beyond the last, its time plus the rest at the fitted bandwidth.
  if (bytes <= t.front().bytes)
    return latencySeconds +
           (t.front().seconds - latencySeconds) * bytes / t.front().bytes;
  for (size_t i = 1; i < t.size(); ++i)
    if (bytes <= t[i].bytes) {
      double f = (bytes - t[i - 1].bytes) / (t[i].bytes - t[i - 1].bytes);
      return t[i - 1].seconds + f * (t[i].seconds - t[i - 1].seconds);
    }
  return t.back().seconds + factor * (bytes - t.back().bytes) / rate;
}

Link Topology::link(int a, int b) const {
  if (a == b)
    return {nodeLink[a], kIntraNodeLatency, LinkKind::IntraNode};
  auto it = pairs.find(pairKey(a, b));
  if (it != pairs.end())
    return it->second;
  const LinkFigure &net = network;
  const TopologySpec &t = topo;
  int ra = rackOf(a), rb = rackOf(b);
  if (ra < 0 || rb < 0)
    return fromFigure(net, LinkKind::Network);
  if (ra == rb)
    return fromFigure(t.intraRack.value_or(net), LinkKind::IntraRack);
  LinkFigure inter = t.interRack.value_or(net);
  if (zone[ra] == zone[rb])
    return fromFigure(inter, LinkKind::InterRack);
  return fromFigure(t.interZone.value_or(inter), LinkKind::InterZone);
}

double Topology::sendSeconds(int a, int b, double bytes,
                             double efficiency) const {
  return link(a, b).seconds(bytes, efficiency);
}

std::vector<int> Topology::placementOrder(llvm::ArrayRef<int> nodes) const {
  std::vector<int> order(nodes.begin(), nodes.end());
  if (rack.empty())
    return order;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    int ra = rack[a], rb = rack[b];
    return std::make_pair(zone[ra], ra) < std::make_pair(zone[rb], rb);
  });
  return order;
}

Link Topology::ringBottleneck(llvm::ArrayRef<int> nodes) const {
  if (nodes.empty())
    return link(0, 0);
  if (pairs.empty()) {
    // Without pair overrides only the link kinds matter, and which ones a
    // rack-by-rack ring uses follows from how many racks and zones it
    // touches: linear, no sort (the search asks this for every candidate).
    bool manyNodes = llvm::any_of(nodes, [&](int n) { return n != nodes[0]; });
    if (!manyNodes)
      return link(nodes[0], nodes[0]);
    if (rack.empty())
      return link(nodes[0], nodes[1] == nodes[0] ? nodes.back() : nodes[1]);
    std::vector<int> perRack(zone.size(), 0), racksInZone(zone.size(), 0);
    int zonesTouched = 0, racksTouched = 0;
    for (int n : nodes)
      if (perRack[rack[n]]++ == 0) {
        ++racksTouched;
        zonesTouched += racksInZone[zone[rack[n]]]++ == 0;
      }
    const TopologySpec &t = topo;
    const LinkFigure &net = network;
    std::vector<Link> used;
    if (llvm::any_of(perRack, [](int c) { return c > 1; }))
      used.push_back(fromFigure(t.intraRack.value_or(net), LinkKind::IntraRack));
    if (llvm::any_of(racksInZone, [](int c) { return c > 1; }) ||
        (racksTouched > 1 && zonesTouched == 1))
      used.push_back(fromFigure(t.interRack.value_or(net), LinkKind::InterRack));
    if (zonesTouched > 1)
      used.push_back(fromFigure(t.interZone.value_or(t.interRack.value_or(net)),
                                LinkKind::InterZone));
    Link worst = used.front();
    for (const Link &l : used) {
      if (l.bytesPerSecond < worst.bytesPerSecond)
        worst = Link{l.bytesPerSecond, worst.latencySeconds, l.kind};
      worst.latencySeconds = std::max(worst.latencySeconds, l.latencySeconds);
    }
    return worst;
  }
  std::vector<int> ring = placementOrder(nodes);
  ring.erase(std::unique(ring.begin(), ring.end()), ring.end());
  if (ring.size() == 1)
    return link(ring[0], ring[0]);
  Link worst = link(ring.back(), ring.front());
  double latency = worst.latencySeconds;
  for (size_t i = 0; i + 1 < ring.size(); ++i) {
    Link l = link(ring[i], ring[i + 1]);
    latency = std::max(latency, l.latencySeconds);
    if (l.bytesPerSecond < worst.bytesPerSecond)
      worst = l;
  }
  worst.latencySeconds = latency;
  return worst;
}

double Topology::ringAllReduceSeconds(llvm::ArrayRef<int> nodes,
                                      int64_t members, double bytes,
                                      double efficiency) const {
  if (members <= 1 || nodes.empty())
    return 0;
  const Link *measured = measuredAllReduce(nodes);
  Link l = measured ? *measured : ringBottleneck(nodes);
  double P = double(members);
  // A measured all-reduce's times are by buffer bytes already.
  if (measured && measured->times)
    return l.seconds(bytes, efficiency, 2.0 * (P - 1) / P);
  return 2.0 * (P - 1) / P * bytes /
             (l.bytesPerSecond * l.efficiency(efficiency)) +
         l.latencySeconds;
}

const Link *Topology::measuredAllReduce(llvm::ArrayRef<int> nodes) const {
  if (allReduces.empty())
    return nullptr;
  std::vector<int> set(nodes.begin(), nodes.end());
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  for (const auto &[members, l] : allReduces)
    if (members == set)
      return &l;
  return nullptr;
}

Link Topology::fastestBetween(llvm::ArrayRef<int> nodes) const {
  Link best = fromFigure(network, LinkKind::Network);
  bool found = false;
  // Neighbours in placement order are the closest pairs; any pair override
  // among the nodes is checked too.
  std::vector<int> order = placementOrder(nodes);
  order.erase(std::unique(order.begin(), order.end()), order.end());
  auto consider = [&](int a, int b) {
    Link l = link(a, b);
    if (!found || l.bytesPerSecond > best.bytesPerSecond) {
      best = l;
      found = true;
    }
  };
  for (size_t i = 0; i + 1 < order.size(); ++i)
    consider(order[i], order[i + 1]);
  if (!pairs.empty())
    for (size_t i = 0; i < order.size(); ++i)
      for (size_t j = i + 1; j < order.size(); ++j)
        if (pairs.count(pairKey(order[i], order[j])))
          consider(order[i], order[j]);
  return best;
}

bool Topology::tensorParallelAcross(int a, int b) const {
  if (a == b)
    return true;
  double own = std::min(bandwidth(a, a), bandwidth(b, b));
  return bandwidth(a, b) >= 0.5 * own;
}

std::string Topology::summary() const {
  const TopologySpec &t = topo;
  if (!t.present)
    return "";
  std::string s;
  if (!t.racks.empty()) {
    s += llvm::formatv("{0} rack(s) (", t.racks.size()).str();
    for (size_t r = 0; r < t.racks.size(); ++r) {
      s += (r ? "; " : "") + t.racks[r].name;
      if (!t.racks[r].zone.empty())
        s += " in " + t.racks[r].zone;
      s += ":";
      for (const std::string &n : t.racks[r].nodes)
        s += " " + n;
    }
    s += ")";
    const LinkFigure &net = network;
    auto figure = [&](const char *name, const LinkFigure &f) {
      s += llvm::formatv(", {0} {1} Gb/s {2} us", name,
                         llvm::format("%g", f.bandwidthGbps),
                         llvm::format("%g", f.latencyUs))
               .str();
    };
    figure("intra-rack", t.intraRack.value_or(net));
    figure("inter-rack", t.interRack.value_or(net));
    if (t.interZone)
      figure("inter-zone", *t.interZone);
  }
  if (!t.pairs.empty()) {
    int measured = int(llvm::count_if(
        t.pairs, [](const NodePairSpec &p) { return p.measured; }));
    s += llvm::formatv("{0}{1} node-pair link(s)", s.empty() ? "" : ", ",
                       t.pairs.size())
             .str();
    if (measured)
      s += llvm::formatv(" ({0} measured)", measured).str();
  }
  if (!t.allReduces.empty())
    s += llvm::formatv("{0}{1} all-reduce(s) across nodes", s.empty() ? "" : ", ",
                       t.allReduces.size())
             .str();
  return s;
}
