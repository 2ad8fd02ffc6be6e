//===- LinkCalibration.cpp - measure a cluster's links into its topology --===//
//
// The ranks are started exactly as frenzy-launch starts a plan's (the same
// launcher code, fed a plan of one rank per node), so a cluster that this
// calibrates is one that frenzy-launch can run on, through the same agent.
// Rank 0's result lines come back through mpirun's output: the nodes need
// no file system in common with this machine for it.
//
//===----------------------------------------------------------------------===//
#include "LinkCalibration.h"

#include "HostLaunch.h"
#include "Tensor.h"

#include "frenzy/Cluster/ClusterSpec.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace frenzy::calibrate {

namespace {

ClusterSpec loadCluster(const std::string &path) {
  auto c = readClusterFile(path);
  if (!c) {
    std::string msg = llvm::toString(c.takeError());
    throw rt::RuntimeError(msg);
  }
  if (c->nodes.size() < 2)
    throw rt::RuntimeError(path + ": measuring links needs at least two "
                                  "nodes, the file has " +
                           std::to_string(c->nodes.size()));
  for (const ClusterNode &n : c->nodes)
    if (n.host.empty())
      throw rt::RuntimeError(path + ": node '" + n.name +
                             "' names no host; give every node a 'host:' "
                             "(docs/multinode.md) to measure its links");
  return std::move(*c);
}

/// One rank per node, in file order: the plan launchOnHosts starts.
plan::Plan planOf(const ClusterSpec &c) {
  plan::Plan p;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    plan::NodeHost *h = p.add_nodes();
    h->set_name(c.nodes[i].name);
    h->set_host(c.nodes[i].host);
    plan::Rank *r = p.add_ranks();
    r->set_id(int32_t(i));
    r->set_node(c.nodes[i].name);
    r->set_gpu_type(c.nodes[i].gpu);
  }
  return p;
}

std::string absolute(const std::string &path) {
  if (!path.empty() && path[0] == '/')
    return path;
  char cwd[4096];
  if (!getcwd(cwd, sizeof(cwd)))
    return path;
  return std::string(cwd) + "/" + path;
}

/// Runs `launch` with this process's stdout going to a file (mpirun and
/// the ranks inherit it); returns the file's lines.
template <class F> std::vector<std::string> capturedStdout(F launch, int &rc) {
  char tmpl[] = "/tmp/frenzy-calibrate-net-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0)
    throw rt::RuntimeError("cannot make a temporary file in /tmp");
  std::fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  close(fd);
  struct Restore {
    int saved;
    ~Restore() {
      std::fflush(stdout);
      dup2(saved, 1);
      close(saved);
    }
  };
  {
    Restore r{saved};
    rc = launch();
  }
  std::vector<std::string> lines;
  std::ifstream in(tmpl);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  unlink(tmpl);
  return lines;
}

struct Measured {
  std::vector<int> nodes; // indices into the cluster's nodes
  Fit fit;
  double factor = 1; // bytes on the wire per byte of message
};

/// "8:1.2e-05 65536:0.0006 ..." after the node fields.
std::vector<std::pair<double, double>> points(std::istringstream &in) {
  std::vector<std::pair<double, double>> pts;
  for (std::string item; in >> item;) {
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      continue;
    pts.emplace_back(std::atof(item.substr(0, colon).c_str()),
                     std::atof(item.substr(colon + 1).c_str()));
  }
  return pts;
}

std::string nodeList(const ClusterSpec &c, const std::vector<int> &nodes) {
  std::string s;
  for (int n : nodes)
    s += (s.empty() ? "" : ", ") + c.nodes[size_t(n)].name;
  return s;
}

std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

/// The figure's YAML lines (a block sequence entry).
std::vector<std::string> entry(const ClusterSpec &c, const Measured &m) {
  std::string times;
  for (auto &[bytes, t] : m.fit.points)
    times += (times.empty() ? "" : ", ") + fmt("{bytes: %.0f, ", bytes) +
             fmt("ms: %.4g}", t * 1e3);
  return {"  - nodes: [" + nodeList(c, m.nodes) + "]",
          "    bandwidth_gbps: " + fmt("%.4g", m.fit.bandwidth * 8 / 1e9),
          "    latency_us: " + fmt("%.1f", m.fit.latency * 1e6),
          "    measured: true", "    times: [" + times + "]"};
}

/// `text` with the measured blocks in its topology: section (a new one at
/// the end when it has none). Refuses a topology already holding pairs:
/// or allreduce: (the measured ones would be listed twice).
std::string withTopology(const std::string &path, const std::string &text,
                         const std::vector<std::string> &block) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  auto topLevel = [](const std::string &l) {
    return !l.empty() && l[0] != ' ' && l[0] != '#' && l[0] != '\t';
  };
  size_t topo = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("topology:", 0) == 0) {
      std::string rest = lines[i].substr(9);
      size_t k = rest.find_first_not_of(" \t");
      if (k != std::string::npos && rest[k] != '#')
        throw rt::RuntimeError(path + ":" + std::to_string(i + 1) +
                               ": topology: is written in flow style; write "
                               "it as a block (one key a line) so that the "
                               "measured links can be added");
      topo = i;
    }
  std::string indent = "  ";
  if (topo < lines.size()) {
    bool indentSeen = false;
    for (size_t i = topo + 1; i < lines.size() && !topLevel(lines[i]); ++i) {
      size_t k = lines[i].find_first_not_of(" ");
      if (k == std::string::npos || lines[i][k] == '#')
        continue;
      if (!indentSeen) {
        indent = lines[i].substr(0, k);
        indentSeen = true;
      }
      std::string key = lines[i].substr(k);
      if (k == indent.size() &&
          (key.rfind("pairs:", 0) == 0 || key.rfind("allreduce:", 0) == 0))
        throw rt::RuntimeError(
            path + ":" + std::to_string(i + 1) + ": the topology already has " +
            key.substr(0, key.find(':')) +
            ": (an earlier calibration?); measure from a file without "
            "topology pairs: and allreduce:");
    }
  }
  std::string out;
  std::vector<std::string> added;
  for (const std::string &l : block)
    added.push_back(indent + l);
  if (topo == lines.size()) {
    for (const std::string &l : lines)
      out += l + "\n";
    out += "topology:\n";
    for (const std::string &l : added)
      out += l + "\n";
    return out;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
    if (i == topo)
      for (const std::string &l : added)
        out += l + "\n";
  }
  return out;
}

} // namespace

int networkRank(const LinkOptions &o) {
  ClusterSpec c = loadCluster(o.cluster);
  rt::checkOnPlanNode(planOf(c));
  return measureNetworkRank(o.net);
}

int calibrateLinks(const LinkOptions &o) {
  ClusterSpec c = loadCluster(o.cluster);
  std::string out = o.out;
  if (out.empty()) {
    out = o.cluster;
    size_t dot = out.rfind(".yaml");
    if (dot != std::string::npos && dot + 5 == out.size())
      out = out.substr(0, dot);
    out += ".links.yaml";
  }
  struct stat st;
  if (!o.force && out != o.cluster && ::stat(out.c_str(), &st) == 0)
    throw rt::RuntimeError(out + " exists; give --force to replace it, or "
                                 "-o NEW.yaml");
  std::string text;
  {
    std::ifstream in(o.cluster);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }

  rt::Options lo;
  lo.launchAgent = o.launchAgent;
  lo.launchTimeout = o.launchTimeout;
  std::string sizes;
  for (int64_t b : o.net.sizes)
    sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
  lo.argv = {"--network-rank", "--cluster=" + absolute(o.cluster),
             "--sizes=" + sizes, "--rounds=" + std::to_string(o.net.rounds)};
  std::printf("frenzy-calibrate: measuring the links of %zu nodes (%s), "
              "%zu message sizes, %d rounds each\n",
              c.nodes.size(), o.cluster.c_str(), o.net.sizes.size(),
              o.net.rounds);
  std::fflush(stdout);
  int rc = 0;
  std::vector<std::string> lines =
      capturedStdout([&] { return rt::launchOnHosts(lo, planOf(c)); }, rc);
  std::vector<Measured> pairs, reduces;
  for (const std::string &l : lines) {
    if (l.rfind(kNetworkLine, 0) != 0) {
      std::printf("%s\n", l.c_str());
      continue;
    }
    std::istringstream in(l.substr(std::strlen(kNetworkLine)));
    std::string kind;
    in >> kind;
    Measured m;
    if (kind == "pair") {
      int a = -1, b = -1;
      in >> a >> b;
      m.nodes = {a, b};
      m.fit = fitLine(points(in), 1.0);
      pairs.push_back(m);
    } else if (kind == "allreduce") {
      std::string members;
      in >> members;
      std::istringstream ms(members);
      for (std::string r; std::getline(ms, r, ',');)
        m.nodes.push_back(std::atoi(r.c_str()));
      double P = double(m.nodes.size());
      m.factor = 2 * (P - 1) / P;
      m.fit = fitLine(points(in), m.factor);
      reduces.push_back(m);
    }
  }
  size_t want = c.nodes.size() * (c.nodes.size() - 1) / 2;
  if (rc != 0 || pairs.size() != want || reduces.empty())
    throw rt::RuntimeError(
        "the link measurement across the nodes failed (mpirun exit " +
        std::to_string(rc) + ", " + std::to_string(pairs.size()) + " of " +
        std::to_string(want) + " node pairs measured); its output is above");
  for (const std::vector<Measured> *set : {&pairs, &reduces})
    for (const Measured &m : *set) {
      for (int n : m.nodes)
        if (n < 0 || size_t(n) >= c.nodes.size())
          throw rt::RuntimeError("the link measurement named a node it was "
                                 "not given (" + std::to_string(n) +
                                 "); run it again");
      if (!(m.fit.bandwidth > 0) || !std::isfinite(m.fit.bandwidth))
        throw rt::RuntimeError("the link measurement between " +
                               nodeList(c, m.nodes) +
                               " gave no rate (times that do not grow with "
                               "the message size); run it again with larger "
                               "--sizes");
    }

  // The table: per pair and all-reduce, the fit and each size against it.
  for (const std::vector<Measured> *set : {&pairs, &reduces})
    for (const Measured &m : *set) {
      std::printf("%s %s: %.4g Gb/s, %.1f us:",
                  set == &pairs ? "pair" : "all-reduce",
                  nodeList(c, m.nodes).c_str(), m.fit.bandwidth * 8 / 1e9,
                  m.fit.latency * 1e6);
      for (auto &[bytes, t] : m.fit.points)
        std::printf(" %.0f B %.3f ms", bytes, t * 1e3);
      std::printf("\n");
    }

  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::vector<std::string> block = {
      "# Measured by frenzy-calibrate --cluster=" + o.cluster + ", " + when +
          ": one rank per node, messages of " + sizes + " bytes,",
      "# " + std::to_string(o.net.rounds) +
          " rounds (median); times: one-way seconds by size (all-reduce: "
          "by buffer bytes); bandwidth: the slope over the largest sizes (bus "
          "bandwidth for an all-reduce, 2(P-1)/P x bytes / time).",
      "pairs:"};
  for (const Measured &m : pairs)
    for (const std::string &l : entry(c, m))
      block.push_back(l);
  block.push_back("allreduce:");
  for (const Measured &m : reduces)
    for (const std::string &l : entry(c, m))
      block.push_back(l);

  std::string written = withTopology(o.cluster, text, block);
  std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << written;
    if (!f)
      throw rt::RuntimeError(tmp + ": cannot write (" + std::strerror(errno) +
                             ")");
  }
  // What frenzy-opt will read: the parser must take it.
  auto check = readClusterFile(tmp);
  if (!check) {
    std::string msg = llvm::toString(check.takeError());
    ::unlink(tmp.c_str());
    throw rt::RuntimeError("the cluster file with the measured links does "
                           "not read back (" + msg +
                           "); write it next to the input (relative profile "
                           "paths) or fix the input");
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0)
    throw rt::RuntimeError(out + ": cannot write (" + std::strerror(errno) +
                           ")");
  std::printf("frenzy-calibrate: wrote %s (%zu node pair(s), %zu "
              "all-reduce(s) in its topology)\n",
              out.c_str(), pairs.size(), reduces.size());
  return 0;
}

} // namespace frenzy::calibrate
