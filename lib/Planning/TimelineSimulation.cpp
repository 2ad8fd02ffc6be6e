//===- TimelineSimulation.cpp - the predicted timeline of a plan ----------===//
//
// Each rank's stream becomes a list of steps (compute, send, receive,
// collective) with predicted durations; TimelinePlayer.cpp then plays the
// ranks together in time, each as far as it can. What the runtime adds to the
// program's kernels is costed as memory traffic too: the accumulation of
// each micro-batch's gradients, the copies in and out of the DP reduction,
// the norm's sum of squares, and the private copy of every sent tensor.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/TimelineSimulation.h"
#include "TimelinePlayer.h"

#include "frenzy/Cluster/DeviceProfile.h"
#include "frenzy/Cluster/Topology.h"
#include "plan/KernelCost.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

using namespace frenzy;

namespace {

using timeline::Args;
using timeline::Op;

class Simulator {
public:
  Simulator(const plan::Plan &p, const ClusterSpec &c)
      : plan(p), cluster(c), topo(c) {
    for (size_t i = 0; i < c.nodes.size(); ++i)
      nodeIndex[c.nodes[i].name] = int(i);
  }

  PredictedTimeline run() {
    if (plan.stages_size() == 0)
      oneRank();
    else
      for (const plan::Rank &r : plan.ranks())
        rankOps.push_back(opsOf(r));
    std::vector<std::string> core = coreOfRanks();
    std::vector<timeline::PlayerRank> pr(rankOps.size());
    for (size_t i = 0; i < pr.size(); ++i) {
      pr[i].core = i < core.size() ? core[i] : "";
      if (int(i) < plan.ranks_size()) {
        const plan::Rank &r = plan.ranks(int(i));
        pr[i].node = r.node();
        // What its turns touch: its predicted peak and the runtime's
        // buffers beside it, the DP pieces' copy and its shared-memory
        // slot (runtime/dist/NodeAllReduce.h).
        pr[i].peakBytes = double(r.predicted_peak_bytes()) +
                          2 * (i < dpBytes.size() ? dpBytes[i] : 0);
        pr[i].profile = &profileOf(r.gpu_type());
      }
      pr[i].stateBytes = i < stateBytes.size() ? stateBytes[i] : 0;
    }
    return timeline::play(std::move(rankOps), pr);
  }

  /// Per rank, per stream position: the seconds of the action's ops (no
  /// play: durations do not depend on the order).
  std::vector<std::vector<double>> actionSeconds() {
    std::vector<std::vector<double>> sec;
    if (plan.stages_size() == 0)
      return sec;
    for (const plan::Rank &r : plan.ranks()) {
      std::vector<double> &s = sec.emplace_back(size_t(r.stream_size()), 0.0);
      for (const Op &o : opsOf(r))
        if (o.action >= 0 && size_t(o.action) < s.size())
          s[size_t(o.action)] += o.seconds;
    }
    return sec;
  }

private:
  const DeviceProfile &profileOf(const std::string &type) {
    auto it = profiles.find(type);
    if (it != profiles.end())
      return it->second;
    const GpuType *g = cluster.gpuType(type);
    DeviceProfile p;
    if (g && g->profile)
      p = *g->profile;
    else if (g)
      p = DeviceProfile::fromDatasheet(*g);
    return profiles[type] = p;
  }

  /// The link between two ranks: the profile's link of the node's kind,
  /// else the cluster file's figures with the default efficiencies.
  LinkProfile linkBetween(const plan::Rank &a, const plan::Rank &b) {
    const DeviceProfile &p = profileOf(a.gpu_type());
    bool sameNode = a.node() == b.node();
    const ClusterNode *node = nullptr;
    for (const ClusterNode &n : cluster.nodes)
      if (n.name == a.node())
        node = &n;
    if (!sameNode)
      if (std::optional<Link> m = measuredLink(a.node(), b.node())) {
        // frenzy-calibrate --links measured this pair: as achieved, no
        // efficiency; small all-reduces (the norm's) at the pair's own
        // measured all-reduce latency where there is one.
        LinkProfile l;
        l.bandwidth = l.reduceBandwidth = m->bytesPerSecond;
        l.latency = l.reduceLatency = m->latencySeconds;
        if (const Link *ar = topo.measuredAllReduce(
                {nodeIndex[a.node()], nodeIndex[b.node()]}))
          l.reduceLatency = ar->latencySeconds;
        return l;
      }
    std::string kind = sameNode ? (node ? node->link : "shm") : "network";
    if (p.calibrated && (sameNode || p.links.count("network")))
      if (const LinkProfile *l = p.link(kind))
        return *l;
    LinkProfile l;
    if (sameNode) {
      l.bandwidth = (node ? node->bandwidthGBs() : 25.0) * 1e9 * 0.8;
      l.latency = l.reduceLatency = 10e-6;
    } else {
      l.bandwidth = cluster.network.bandwidthGbps / 8.0 * 1e9 * 0.8;
      l.latency = l.reduceLatency = cluster.network.latencyUs * 1e-6;
    }
    l.reduceBandwidth = l.bandwidth;
    return l;
  }

  /// The topology's link between two nodes where frenzy-calibrate
  /// measured it (a measured node pair), else null.
  std::optional<Link> measuredLink(const std::string &a,
                                   const std::string &b) {
    auto ia = nodeIndex.find(a), ib = nodeIndex.find(b);
    if (ia == nodeIndex.end() || ib == nodeIndex.end())
      return std::nullopt;
    Link l = topo.link(ia->second, ib->second);
    if (!l.measured)
      return std::nullopt;
    return l;
  }

  /// A DP all-reduce of `bytes` among `members` that spans nodes whose
  /// links (or whose all-reduce) frenzy-calibrate measured: the topology's
  /// ring (2(P-1)/P x bytes over the measured bus bandwidth, plus its
  /// latency); < 0 otherwise.
  double measuredAllReduce(
      double bytes, const google::protobuf::RepeatedField<int32_t> &members) {
    std::vector<int> nodes;
    for (int32_t m : members) {
      if (m < 0 || m >= plan.ranks_size())
        return -1;
      auto it = nodeIndex.find(plan.ranks(m).node());
      if (it == nodeIndex.end())
        return -1;
      nodes.push_back(it->second);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (nodes.size() < 2 ||
        !(topo.measuredAllReduce(nodes) || topo.ringBottleneck(nodes).measured))
      return -1;
    return topo.ringAllReduceSeconds(nodes, members.size(), bytes, 1.0);
  }

  double memorySeconds(const DeviceProfile &p, double bytes) {
    return p.kernelSeconds(KernelKind::MemoryBound, 0, bytes) - p.opOverhead;
  }

  /// Seconds of the program's kernels `instrs`; their per-class split.
  double kernels(const plan::Program &prog, const std::vector<int32_t> &instrs,
                 const DeviceProfile &p, const LinkProfile &tp, int64_t tpSize,
                 Args &args) {
    double cls[plan::kNumOpClasses] = {};
    for (int32_t i : instrs) {
      const plan::Instr &in = prog.instrs(i);
      plan::OpClass c = plan::opClassOf(in.op());
      auto [flops, bytes] = plan::kernelWork(prog, in);
      double s;
      if (c == plan::kCommunication) {
        double n = in.outputs_size() ? (plan::tensorBytes(
                                           prog.tensors(in.outputs(0))))
                                     : 0;
        s = p.opOverhead + tp.allReduceSeconds(n, double(tpSize));
      } else {
        s = p.kernelSeconds(in.op(),
                            c == plan::kMatmul      ? KernelKind::Contraction
                            : c == plan::kAttention ? KernelKind::Attention
                                                    : KernelKind::MemoryBound,
                            flops, bytes);
      }
      cls[c] += s;
    }
    double total = 0;
    for (int c = 0; c < plan::kNumOpClasses; ++c) {
      total += cls[c];
      if (cls[c] > 0)
        args.emplace_back(std::string(plan::opClassName(c)) + "_us",
                          cls[c] * 1e6);
    }
    return total;
  }

  Op compute(std::string name, const char *cat, double seconds, Args args) {
    Op o;
    o.kind = Op::Compute;
    o.name = std::move(name);
    o.cat = cat;
    // The node's other CPU ranks slow its kernels (measured contention).
    o.seconds = seconds * slowdown;
    o.args = std::move(args);
    for (auto &[key, value] : o.args)
      value *= slowdown;
    return o;
  }

  /// A one-rank plan: the program's forward, backward and update runs.
  void oneRank() {
    const plan::Program &prog = plan.program();
    std::string type = plan.devices_size() ? plan.devices(0).gpu_type() : "cpu";
    const DeviceProfile &p = profileOf(type);
    std::vector<Op> ops;
    for (const plan::Phase &ph : plan::oneRankPhases(prog)) {
      Args args;
      double s = kernels(prog, ph.instrs, p, LinkProfile(), 1, args);
      ops.push_back(compute(ph.name, ph.cat, s, std::move(args)));
    }
    rankOps.push_back(std::move(ops));
  }

  std::vector<Op> opsOf(const plan::Rank &r) {
    const plan::StageProgram *st = nullptr;
    for (const plan::StageProgram &sp : plan.stages())
      for (int32_t k : sp.ranks())
        if (k == r.id())
          st = &sp;
    std::vector<Op> ops;
    if (!st)
      return ops;
    const plan::Program &prog = *plan::programAt(plan, st->program());
    const DeviceProfile &p = profileOf(r.gpu_type());
    int onNode = 0;
    for (const plan::Rank &k : plan.ranks())
      onNode += k.node() == r.node() && k.gpu_type() == r.gpu_type();
    // With cold turns measured, the turns on a shared core are costed
    // where they happen (play()); the contention factor then only counts
    // the ranks' sharing of the memory system (one rank per core).
    slowdown = p.contentionSlowdown(
        p.coldTurn.empty() || p.cores <= 0 ? onNode
                                           : std::min(onNode, p.cores));
    int64_t tpSize = st->ranks_size();
    LinkProfile tpLink =
        linkBetween(r, plan.ranks(st->ranks((r.tp_rank() + 1) % tpSize)));
    std::vector<int32_t> fwd(st->forward_instrs().begin(),
                             st->forward_instrs().end());
    std::vector<int32_t> bwd(st->backward_instrs().begin(),
                             st->backward_instrs().end());
    std::vector<int32_t> upd(st->update_instrs().begin(),
                             st->update_instrs().end());
    // The runtime does not run clip_grad_norm's kernel on several ranks:
    // the norm is the all-reduced sum of squares (costed below), the
    // kernel's outputs two scalars it writes.
    std::vector<int32_t> updRun;
    for (int32_t i : upd)
      if (prog.instrs(i).op() != "clip_grad_norm")
        updRun.push_back(i);
    Args fArgs, bArgs, uArgs;
    double fSec = kernels(prog, fwd, p, tpLink, tpSize, fArgs);
    double bSec = kernels(prog, bwd, p, tpLink, tpSize, bArgs);
    // Gradients this rank accumulates over micro-batches and reduces.
    double gradBytes = plan::updatedParameterBytes(prog, upd);
    stateBytes.resize(size_t(plan.ranks_size()));
    stateBytes[size_t(r.id())] = gradBytes;
    double accumulate = memorySeconds(p, 3 * gradBytes);
    double normBytes = 0;
    for (int32_t t : r.norm_tensors())
      normBytes += (plan::tensorBytes(prog.tensors(t)));
    double uSec = kernels(prog, updRun, p, tpLink, tpSize, uArgs) +
                  memorySeconds(p, normBytes);
    int mbSeen = 0, pos = -1;
    for (const plan::Action &a : r.stream()) {
      // Every op pushed below belongs to this action (tagged at the next).
      for (size_t k = ops.size(); k-- > 0 && ops[k].action < 0;)
        ops[k].action = pos;
      ++pos;
      std::string name = plan::sliceName(a);
      switch (a.kind()) {
      case plan::Action::FORWARD:
        ops.push_back(compute(name, "compute", fSec, fArgs));
        break;
      case plan::Action::BACKWARD:
        ops.push_back(compute(name, "compute",
                              bSec + (mbSeen++ ? accumulate
                                               : memorySeconds(p, 2 * gradBytes)),
                              bArgs));
        break;
      case plan::Action::SEND:
      case plan::Action::RECV: {
        bool send = a.kind() == plan::Action::SEND;
        double bytes = (plan::tensorBytes(prog.tensors(a.tensor())));
        LinkProfile l = linkBetween(r, plan.ranks(a.peer()));
        Op o;
        o.kind = send ? Op::Send : Op::Recv;
        o.name = name;
        o.cat = "comm";
        o.args = {{"bytes", bytes}};
        int from = send ? r.id() : a.peer(), to = send ? a.peer() : r.id();
        o.key = std::to_string(from) + ">" + std::to_string(to) + ":" +
                std::to_string(a.tensor()) + ":" +
                std::to_string(a.micro_batch());
        // Sending copies the tensor and posts it; receiving moves it.
        o.seconds = send ? bytes / p.copyBandwidth + l.latency
                         : l.latency + bytes / l.bandwidth;
        // A measured pair's time at this size (frenzy-calibrate --cluster).
        if (!send)
          if (std::optional<Link> m =
                  measuredLink(r.node(), plan.ranks(a.peer()).node()))
            o.seconds = m->seconds(bytes, 1.0);
        o.waitName = "wait " + name;
        ops.push_back(o);
        break;
      }
      case plan::Action::REDUCE_GRADS: {
        // Per group its pieces copied out (before the sum, with the core),
        // summed; then every group's sum copied back, and scaled.
        double reduceCopies = 0;
        for (int g = 0; g < plan.groups_size(); ++g) {
          const plan::CommGroup &grp = plan.groups(g);
          if (grp.kind() != plan::CommGroup::DP ||
              std::find(grp.ranks().begin(), grp.ranks().end(), r.id()) ==
                  grp.ranks().end())
            continue;
          double bytes = 0;
          for (const plan::Member &m : grp.members())
            if (m.rank() == r.id())
              for (const plan::Piece &pc : m.pieces())
                bytes += (plan::tensorBytes(prog.tensors(pc.tensor()))) /
                         double(std::max(1, pc.count()));
          reduceCopies += memorySeconds(p, 2 * bytes);
          dpBytes.resize(size_t(plan.ranks_size()));
          dpBytes[size_t(r.id())] += bytes;
          int peer = grp.ranks(0) == r.id() ? grp.ranks(1) : grp.ranks(0);
          LinkProfile l = linkBetween(r, plan.ranks(peer));
          double n = double(grp.ranks_size());
          Op o;
          o.kind = Op::Collective;
          o.name = "dp all-reduce";
          o.cat = "comm";
          o.key = "dp" + std::to_string(g);
          o.members = grp.ranks_size();
          double across = measuredAllReduce(bytes, grp.ranks());
          o.seconds = sharedAllReduce(p, bytes, grp.ranks(),
                                      across >= 0
                                          ? across
                                          : l.allReduceSeconds(bytes, n));
          ops.push_back(compute("dp copy in", "compute",
                                memorySeconds(p, 2 * bytes) +
                                    nodeSum(o, p, bytes, grp.ranks()),
                                {}));
          o.waitName = "wait dp";
          o.args = {{"bytes", bytes}};
          ops.push_back(o);
        }
        ops.push_back(compute("dp copies", "compute",
                              reduceCopies + memorySeconds(p, 2 * gradBytes),
                              {}));
        break;
      }
      case plan::Action::UPDATE: {
        // One rank (a --global-batch plan on one device): no norm to sum.
        if (plan.ranks_size() == 1) {
          ops.push_back(compute("optimizer", "optimizer", uSec, uArgs));
          break;
        }
        const plan::Rank &peer = plan.ranks(r.id() == 0 ? 1 : 0);
        LinkProfile l = linkBetween(r, peer);
        Op o;
        o.kind = Op::Collective;
        o.name = "norm all-reduce";
        o.cat = "comm";
        o.key = "norm";
        o.members = plan.ranks_size();
        // The loss, the squared norm and each rank's peak memory (doubles).
        std::vector<int32_t> all;
        for (const plan::Rank &k : plan.ranks())
          all.push_back(k.id());
        o.seconds = sharedAllReduce(
            p, 8.0 * (2 + plan.ranks_size()), all,
            l.reduceLatency *
                std::max(1.0, std::log2(double(plan.ranks_size()))));
        nodeSum(o, p, 8.0 * (2 + plan.ranks_size()), all);
        o.waitName = "wait norm";
        ops.push_back(o);
        ops.push_back(compute("optimizer", "optimizer", uSec, uArgs));
        break;
      }
      case plan::Action::SYNC_PARAMS:
        for (const plan::CommGroup &g : plan.groups()) {
          if (g.kind() != plan::CommGroup::TIED ||
              std::find(g.ranks().begin(), g.ranks().end(), r.id()) ==
                  g.ranks().end())
            continue;
          double bytes = 0;
          for (int32_t t : g.tensors())
            bytes += (plan::tensorBytes(prog.tensors(t)));
          int owner = g.ranks(0);
          for (int k = 1; k < g.ranks_size(); ++k) {
            int to = g.ranks(k);
            if (r.id() != owner && r.id() != to)
              continue;
            LinkProfile l = linkBetween(r, plan.ranks(r.id() == owner ? to : owner));
            Op o;
            o.kind = r.id() == owner ? Op::Send : Op::Recv;
            o.name = "sync tied params";
            o.cat = "comm";
            o.key = "tied" + std::to_string(owner) + ">" + std::to_string(to);
            o.seconds = r.id() == owner ? bytes / p.copyBandwidth + l.latency
                                        : l.latency + bytes / l.bandwidth;
            o.waitName = "wait tied params";
            ops.push_back(o);
            // The owner's sync ends when the receiver has the parameters
            // (the runtime waits for its sends; a large one completes only
            // once received), inside the owner's one "sync tied params".
            Op ack;
            ack.kind = r.id() == owner ? Op::Recv : Op::Send;
            ack.name = "sync tied params";
            ack.cat = "comm";
            ack.key = o.key + ":received";
            // Waiting for its sends, a rank that takes turns on a shared
            // core keeps it a while (runtime/dist/Comm.cpp waitSends).
            ack.spin = timeline::kSendSpin;
            ops.push_back(ack);
          }
        }
        break;
      case plan::Action::SIDE_TASK: {
        // The runtime skips slots (no side-task host yet): no time, but
        // the trace shows where the slot falls against the bubbles.
        const plan::SideTaskSlot &st = a.side_task();
        Op o = compute(name, "side-task", 0,
                       {{"steps", double(st.steps())},
                        {"planned_start_us", st.start() * 1e6}});
        o.slot = st.duration();
        ops.push_back(o);
        break;
      }
      default:
        break;
      }
    }
    for (size_t k = ops.size(); k-- > 0 && ops[k].action < 0;)
      ops[k].action = pos;
    return ops;
  }

  /// A member's time in an all-reduce among `members`: `alone` when each
  /// has a core of its own; when some share one (more CPU ranks than
  /// cores), the profile's measured cost of each member's turns on its
  /// core (DeviceProfile::sharedAllReduceSeconds; the members on a core
  /// then run them one after another).
  double sharedAllReduce(const DeviceProfile &p, double bytes,
                         const google::protobuf::RepeatedField<int32_t> &members,
                         double alone) {
    return sharedAllReduce(p, bytes,
                           std::vector<int32_t>(members.begin(), members.end()),
                           alone);
  }
  double sharedAllReduce(const DeviceProfile &p, double bytes,
                         const std::vector<int32_t> &members, double alone) {
    if (cores.empty())
      cores = coreOfRanks();
    std::map<std::string, int> onCore;
    int most = 1;
    for (int32_t m : members)
      if (m >= 0 && size_t(m) < cores.size() && !cores[m].empty())
        most = std::max(most, ++onCore[cores[m]]);
    double shared = p.sharedAllReduceSeconds(bytes, int(members.size()));
    return most > 1 && shared >= 0 ? shared : alone;
  }

  /// Ranks that take turns on shared cores sum a group that lives on one
  /// node through shared memory (runtime/dist/NodeAllReduce.h): each
  /// member copies its buffer in, the last to arrive sums all of them
  /// (core-free for the others: `latency`), and each copies the sum out
  /// once it has its core again (`seconds`).
  /// Returns the seconds a member spends copying its buffer in, with its
  /// core, before it arrives (0: MPI sums this group).
  template <class Members>
  double nodeSum(Op &o, const DeviceProfile &p, double bytes,
                 const Members &members) {
    if (cores.empty())
      cores = coreOfRanks();
    bool turns = false;
    for (const std::string &c : cores)
      turns |= !c.empty();
    if (!turns)
      return 0;
    std::string node;
    for (int32_t m : members) {
      if (m < 0 || m >= plan.ranks_size())
        return 0;
      if (node.empty())
        node = plan.ranks(m).node();
      else if (plan.ranks(m).node() != node)
        return 0;
    }
    double n = double(std::max<size_t>(1, size_t(members.size())));
    o.nodeSum = true;
    // The slots and the sum were written by other processes on other
    // cores: read at the rate of memory out of the caches (the profile's
    // largest measured buffer), as is the sum copied out.
    double rate = p.memory.empty() ? 0 : p.memory.back().rate;
    auto cold = [&](double b) {
      return rate > 0 ? b / rate : memorySeconds(p, b);
    };
    o.latency = cold((n + 1) * bytes);
    o.seconds = cold(2 * bytes);
    // Copying in reads its own buffer (cached) into its slot, whose lines
    // the summing rank's core read last step.
    return memorySeconds(p, bytes) + cold(bytes);
  }

  /// The core each rank runs on, when its node has more CPU ranks than
  /// cores: frenzy-launch binds them round-robin (the node's i-th rank on
  /// core i mod cores). Otherwise each rank has a core of its own ("").
  std::vector<std::string> coreOfRanks() {
    std::vector<std::string> core(std::max(1, plan.ranks_size()));
    std::map<std::string, int> onNode, seen;
    for (const plan::Rank &r : plan.ranks())
      ++onNode[r.node() + "/" + r.gpu_type()];
    for (const plan::Rank &r : plan.ranks()) {
      std::string node = r.node() + "/" + r.gpu_type();
      int cores = profileOf(r.gpu_type()).cores;
      int i = seen[node]++;
      if (plan.ranks_size() > 1 && cores > 0 && onNode[node] > cores)
        core[r.id()] = node + "#" + std::to_string(i % cores);
    }
    return core;
  }

  const plan::Plan &plan;
  const ClusterSpec &cluster;
  Topology topo;                           // measured links, if any
  std::map<std::string, int> nodeIndex;    // cluster node name -> index
  std::map<std::string, DeviceProfile> profiles;
  std::vector<std::vector<Op>> rankOps;
  std::vector<std::string> cores;          // coreOfRanks(), once
  double slowdown = 1;                     // compute(): the rank's node's
  std::vector<double> stateBytes;          // parameters each rank updates
  std::vector<double> dpBytes;             // what each rank's DP sums move
};

} // namespace

PredictedTimeline frenzy::simulateTimeline(const plan::Plan &plan,
                                           const ClusterSpec &cluster) {
  return Simulator(plan, cluster).run();
}

std::vector<std::vector<double>>
frenzy::predictedActionSeconds(const plan::Plan &plan,
                               const ClusterSpec &cluster) {
  return Simulator(plan, cluster).actionSeconds();
}

void frenzy::writePredictedTrace(const plan::Plan &plan,
                                 const PredictedTimeline &t,
                                 llvm::raw_ostream &os) {
  std::ostringstream s;
  int ranks = int(t.rankSeconds.size());
  plan::writeTraceHead(s, "predicted", ranks, 1);
  for (int r = 0; r < ranks; ++r) {
    s << (r ? ",\n" : "");
    plan::writeRankNames(s, r,
                         plan.ranks_size() > 1 ? plan::rankLabel(plan, r)
                                               : "rank 0 (one rank)");
    s << ",\n{\"ph\":\"M\",\"pid\":" << r << ",\"tid\":" << kBubbleThread
      << ",\"name\":\"thread_name\",\"args\":{\"name\":\"bubbles and "
         "side-task slots\"}}";
  }
  for (const plan::TraceEvent &e : t.events) {
    s << ",\n";
    plan::writeTraceEvent(s, e);
  }
  plan::writeTraceTail(s);
  os << s.str();
}
