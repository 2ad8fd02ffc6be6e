//===- TopologyYaml.cpp - reading the topology: section -------------------===//
//
// Every check that concerns one value is done on that value (a scalar
// trait), so the error carries its line and column; checks over the whole
// section (a node in no rack, a missing pair) point at the section.
//
//===----------------------------------------------------------------------===//
#include "TopologyYaml.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace frenzy;
using llvm::StringRef;

namespace {

/// A node name inside racks or pairs, checked against the node list.
struct NodeRef {
  std::string name;
};
/// bandwidth_gbps: positive.
struct Gbps {
  double value = 0;
};
/// latency_us: zero or more.
struct Micros {
  double value = 0;
};

std::string nodeList(const TopologyReadState &s) {
  std::string r;
  for (const std::string &n : s.nodes)
    r += (r.empty() ? "" : ", ") + n;
  return r;
}

/// A number, or why it is not one.
std::optional<double> number(StringRef text) {
  double v;
  if (text.trim().getAsDouble(v))
    return std::nullopt;
  return v;
}

} // namespace

template <> struct llvm::yaml::ScalarTraits<NodeRef> {
  static void output(const NodeRef &n, void *, raw_ostream &os) {
    os << n.name;
  }
  static StringRef input(StringRef text, void *ctx, NodeRef &n) {
    n.name = text.str();
    auto *s = static_cast<TopologyReadState *>(ctx);
    if (!s)
      return {};
    std::string field = s->inPair        ? "pairs.nodes"
                        : s->inAllReduce ? "allreduce.nodes"
                                         : "racks.nodes";
    if (!llvm::is_contained(s->nodes, n.name)) {
      s->message = field + ": unknown node '" + n.name +
                   "'; the file's nodes are: " + nodeList(*s);
      return s->message;
    }
    if (s->inAllReduce) {
      if (llvm::is_contained(s->group, n.name)) {
        s->message = field + ": node '" + n.name +
                     "' is listed twice; an all-reduce names each node once";
        return s->message;
      }
      s->group.push_back(n.name);
      return {};
    }
    if (s->inPair) {
      s->pair.push_back(n.name);
      if (s->pair.size() == 2) {
        auto key = std::minmax(s->pair[0], s->pair[1]);
        if (s->pair[0] == s->pair[1])
          s->message = field + ": a pair joins two different nodes, not '" +
                       n.name + "' with itself";
        else if (!s->pairs.insert({key.first, key.second}).second)
          s->message = field + ": the pair '" + key.first + "', '" +
                       key.second + "' is listed twice; keep one entry";
        else
          return {};
        return s->message;
      }
      return {};
    }
    auto [it, fresh] = s->rackOf.emplace(n.name, s->rack);
    if (!fresh) {
      s->message = field + ": node '" + n.name + "' is already in rack '" +
                   it->second + "'; a node belongs to one rack";
      return s->message;
    }
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};
LLVM_YAML_IS_FLOW_SEQUENCE_VECTOR(NodeRef)

/// A number's error, kept in the read state (a scalar trait returns a
/// StringRef).
static StringRef badNumber(void *ctx, const char *field, StringRef text,
                           const char *want) {
  auto *s = static_cast<TopologyReadState *>(ctx);
  std::string m = std::string(field) + ": must be " + want + ", got '" +
                  text.trim().str() + "'";
  if (!s)
    return field;
  s->message = m;
  return s->message;
}

template <> struct llvm::yaml::ScalarTraits<Gbps> {
  static void output(const Gbps &g, void *, raw_ostream &os) { os << g.value; }
  static StringRef input(StringRef text, void *ctx, Gbps &g) {
    auto v = number(text);
    if (!v || *v <= 0)
      return badNumber(ctx, "bandwidth_gbps", text, "a positive number of Gb/s");
    g.value = *v;
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct llvm::yaml::ScalarTraits<Micros> {
  static void output(const Micros &m, void *, raw_ostream &os) {
    os << m.value;
  }
  static StringRef input(StringRef text, void *ctx, Micros &m) {
    auto v = number(text);
    if (!v || *v < 0)
      return badNumber(ctx, "latency_us", text,
                       "a number of microseconds, zero or more");
    m.value = *v;
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct llvm::yaml::MappingTraits<LinkFigure> {
  static void mapping(IO &io, LinkFigure &l) {
    Gbps bw;
    Micros lat{10};
    io.mapRequired("bandwidth_gbps", bw);
    io.mapOptional("latency_us", lat);
    l.bandwidthGbps = bw.value;
    l.latencyUs = lat.value;
  }
};

template <> struct llvm::yaml::MappingTraits<RackSpec> {
  static void mapping(IO &io, RackSpec &r) {
    auto *s = static_cast<TopologyReadState *>(io.getContext());
    io.mapRequired("name", r.name);
    io.mapOptional("zone", r.zone);
    if (s) {
      s->rack = r.name;
      s->inPair = false;
    }
    std::vector<NodeRef> nodes;
    io.mapRequired("nodes", nodes);
    for (const NodeRef &n : nodes)
      r.nodes.push_back(n.name);
  }
  static std::string validate(IO &, RackSpec &r) {
    if (r.name.empty())
      return "racks.name: must not be empty";
    if (r.nodes.empty())
      return "racks.nodes: rack '" + r.name + "' lists no node";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(RackSpec)

/// One `times:` entry: {bytes: B, ms: T}, both positive.
template <> struct llvm::yaml::MappingTraits<SizeSeconds> {
  static void mapping(IO &io, SizeSeconds &t) {
    double ms = 0;
    io.mapRequired("bytes", t.bytes);
    io.mapRequired("ms", ms);
    t.seconds = ms * 1e-3;
  }
  static std::string validate(IO &, SizeSeconds &t) {
    if (!(t.bytes > 0) || !(t.seconds > 0))
      return "times: bytes and ms must be positive numbers";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(SizeSeconds)

/// `times:` ascending by bytes, each size once.
static std::string timesOrder(const std::vector<SizeSeconds> &t) {
  for (size_t i = 1; i < t.size(); ++i)
    if (!(t[i].bytes > t[i - 1].bytes))
      return "times: list the sizes ascending, each once (" +
             std::to_string(int64_t(t[i].bytes)) + " bytes after " +
             std::to_string(int64_t(t[i - 1].bytes)) + ")";
  return "";
}

template <> struct llvm::yaml::MappingTraits<NodePairSpec> {
  static void mapping(IO &io, NodePairSpec &p) {
    auto *s = static_cast<TopologyReadState *>(io.getContext());
    if (s) {
      s->inPair = true;
      s->pair.clear();
    }
    std::vector<NodeRef> nodes;
    io.mapRequired("nodes", nodes);
    if (nodes.size() == 2) {
      p.a = nodes[0].name;
      p.b = nodes[1].name;
    }
    llvm::yaml::MappingTraits<LinkFigure>::mapping(io, p.link);
    io.mapOptional("measured", p.measured);
    io.mapOptional("times", p.times);
    if (s)
      s->inPair = false;
  }
  static std::string validate(IO &, NodePairSpec &p) {
    if (p.a.empty())
      return "pairs.nodes: name exactly two nodes, e.g. [a0, b0]";
    std::string order = timesOrder(p.times);
    return order.empty() ? "" : "pairs." + order;
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(NodePairSpec)

template <> struct llvm::yaml::MappingTraits<AllReduceSpec> {
  static void mapping(IO &io, AllReduceSpec &a) {
    auto *s = static_cast<TopologyReadState *>(io.getContext());
    if (s) {
      s->inAllReduce = true;
      s->group.clear();
    }
    std::vector<NodeRef> nodes;
    io.mapRequired("nodes", nodes);
    for (const NodeRef &n : nodes)
      a.nodes.push_back(n.name);
    if (s)
      s->inAllReduce = false;
    llvm::yaml::MappingTraits<LinkFigure>::mapping(io, a.bus);
    io.mapOptional("measured", a.measured);
    io.mapOptional("times", a.times);
  }
  static std::string validate(IO &io, AllReduceSpec &a) {
    if (a.nodes.size() < 2)
      return "allreduce.nodes: an all-reduce across nodes names at least "
             "two nodes, e.g. [n0, n1]";
    auto *s = static_cast<TopologyReadState *>(io.getContext());
    std::vector<std::string> key = a.nodes;
    std::sort(key.begin(), key.end());
    if (s && !s->groups.insert(key).second)
      return "allreduce.nodes: the node set " + llvm::join(key, ", ") +
             " is listed twice; keep one entry";
    std::string order = timesOrder(a.times);
    return order.empty() ? "" : "allreduce." + order;
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(AllReduceSpec)

namespace {
struct Links {
  std::optional<LinkFigure> intraRack, interRack, interZone;
};
} // namespace

template <> struct llvm::yaml::MappingTraits<Links> {
  static void mapping(IO &io, Links &l) {
    io.mapOptional("intra_rack", l.intraRack);
    io.mapOptional("inter_rack", l.interRack);
    io.mapOptional("inter_zone", l.interZone);
  }
};

void llvm::yaml::MappingTraits<TopologySpec>::mapping(IO &io,
                                                      TopologySpec &t) {
  t.present = true;
  Links links;
  io.mapOptional("links", links);
  t.intraRack = links.intraRack;
  t.interRack = links.interRack;
  t.interZone = links.interZone;
  io.mapOptional("racks", t.racks);
  io.mapOptional("pairs", t.pairs);
  io.mapOptional("allreduce", t.allReduces);
}

std::string llvm::yaml::MappingTraits<TopologySpec>::validate(IO &io,
                                                              TopologySpec &t) {
  auto *s = static_cast<TopologyReadState *>(io.getContext());
  if (!s)
    return "";
  if (!t.racks.empty()) {
    for (const std::string &n : s->nodes)
      if (!s->rackOf.count(n))
        return "racks: node '" + n +
               "' is in no rack; list it under one rack's nodes";
    return "";
  }
  if (t.intraRack || t.interRack || t.interZone)
    return "links: link kinds need racks; group the nodes under racks: "
           "(or give the pairs)";
  // Measured all-reduces alone leave the node pairs to the network figure.
  if (t.pairs.empty() && !t.allReduces.empty())
    return "";
  // No racks: the pairs are the whole network, so every pair is needed.
  for (size_t i = 0; i < s->nodes.size(); ++i)
    for (size_t j = i + 1; j < s->nodes.size(); ++j) {
      auto key = std::minmax(s->nodes[i], s->nodes[j]);
      if (!s->pairs.count({key.first, key.second}))
        return "pairs: no entry for nodes '" + s->nodes[i] + "' and '" +
               s->nodes[j] +
               "'; without racks every node pair needs one (or group the "
               "nodes under racks:)";
    }
  return "";
}
