//===- frenzy-calibrate.cpp - measure what the cost model assumes ---------===//
//
// Measures, on the device it runs on, the figures the planner's cost model
// and predicted timeline use (KernelBench.h: GEMM rate by size, attention,
// memory-bound rate by size, the fixed cost of a kernel, the copy of a sent
// tensor; LinkBench: point-to-point and all-reduce latency and bandwidth
// between two MPI ranks of this machine), and writes them as a device
// profile (YAML, lib/Cluster/DeviceProfile.cpp reads it) that a cluster
// file's GPU type names with `profile: FILE`. With --cluster, the links
// between a cluster's nodes instead (LinkCalibration.h), into a copy of the
// cluster file. Links no MLIR.
//
//===----------------------------------------------------------------------===//
#include "MpiComm.h"
#include "KernelBench.h"
#include "SharedBench.h"
#include "ContentionBench.h"
#include "NetworkBench.h"
#ifdef FRENZY_CALIBRATE_LINKS
#include "LinkCalibration.h"
#include "ProbeBack.h"
#endif

#include "Tensor.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern "C" void openblas_set_num_threads(int);

using namespace frenzy;
using namespace frenzy::calibrate;

namespace {

const char *kUsage =
    "usage: frenzy-calibrate -o PROFILE.yaml [--gpu-type=NAME] "
    "[--plan=REF.bin]... [--quick] [--force]\n"
    "       frenzy-calibrate --cluster=C.yaml [-o C.links.yaml] "
    "[--launch-agent=CMD] [--launch-timeout=SECONDS] [--sizes=8,64K,1M,...] "
    "[--rounds=N] [--quick] [--force]\n"
    "Measures this device (one CPU thread for the CPU backend) and two MPI "
    "ranks on this machine, and writes a device profile for a cluster file's "
    "GPU type (profile: PROFILE.yaml). With --plan (one-rank plans, e.g. of "
    "two micro-batch sizes), the contraction rates and a rate per kernel kind "
    "and size come from timing their steps instruction by instruction.\n"
    "With --cluster (nodes with host:), measures the links between the "
    "nodes (one rank per node, started as frenzy-launch starts a plan's) and "
    "writes a copy of the cluster file with them in its topology "
    "(docs/multinode.md).\n";

struct Options {
  std::string out, gpuType = "cpu", linksOut, sharedOut;
  std::vector<std::string> plans;
  bool quick = false, force = false;
  // Links between nodes (--cluster; LinkCalibration.h).
  std::string cluster, launchAgent, sizes, probe;
  int64_t launchTimeout = 60, rounds = 0;
  bool networkRank = false;
};

/// A whole number in [lo, hi] from option `name`'s text, or one error line.
int64_t wholeNumber(const std::string &name, const std::string &text,
                    int64_t lo, int64_t hi) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || v < lo || v > hi)
    throw rt::RuntimeError(name + ": must be a whole number from " +
                           std::to_string(lo) + " to " + std::to_string(hi) +
                           ", got '" + text + "'");
  return v;
}

struct Link {
  double latency = 0, bandwidth = 0, reduceLatency = 0, reduceBandwidth = 0;
  double sendBandwidth = 0; // the runtime's send: private copy + post
  std::vector<std::pair<double, double>> reduceRates; // bytes, bytes/s
};

/// Median seconds of `f` over `n` rounds.
template <typename F> double median(int n, F f) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - t0)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Under mpirun -np 2: ping-pong and all-reduce between the two ranks, as
/// the runtime sends (a blocking receive of one message) and reduces
/// (MPI_Allreduce of floats). Rank 0 writes "latency bandwidth
/// reduce_latency reduce_bandwidth send_bandwidth" (SI units) to `path`.
int measureLinks(const std::string &path, bool quick) {
  rt::MpiComm comm(nullptr, nullptr);
  int me = comm.rank(), n = comm.size();
  if (n != 2) {
    std::fprintf(stderr, "frenzy-calibrate: the link measurement needs 2 "
                         "ranks, got %d\n", n);
    return 1;
  }
  int rounds = quick ? 20 : 200;
  auto pingPong = [&](size_t bytes) {
    return calibrate::pingPongSeconds(
        me, 0, 1, int64_t(bytes),
        bytes > (1 << 20) ? rounds / 10 + 3 : rounds);
  };
  auto allReduce = [&](size_t floats) {
    std::vector<float> buf(floats, 1.0f);
    auto once = [&] {
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(floats), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    };
    once();
    return median(floats > (1 << 18) ? rounds / 10 + 3 : rounds, once);
  };
  Link l;
  l.latency = pingPong(8);
  size_t big = 4 << 20;
  l.bandwidth = double(big) / std::max(1e-9, pingPong(big) - l.latency);
  l.reduceLatency = allReduce(2);
  size_t bigFloats = 1 << 20;
  l.reduceBandwidth = double(bigFloats * 4) /
                      std::max(1e-9, allReduce(bigFloats) - l.reduceLatency);
  // All-reduce by size, as a step meets it: other kernels ran since the
  // last one, so MPI's shared-memory buffers and the data are out of cache
  // (an 8 MiB sweep before each timed call; warm, a 32 KiB reduction takes
  // 18 us here, after a sweep 30 us, and about 37 us in a TP-2 step).
  {
    std::vector<char> sweep(8 << 20, 1);
    for (size_t floats : {size_t(1) << 10, size_t(1) << 12, size_t(1) << 14,
                          size_t(1) << 16, size_t(1) << 18, size_t(1) << 20}) {
      std::vector<float> buf(floats, 1.0f);
      std::vector<double> t;
      int n = floats > (1 << 18) ? rounds / 10 + 3 : rounds / 4 + 3;
      for (int k = 0; k < n; ++k) {
        for (size_t j = 0; j < sweep.size(); j += 64)
          ++sweep[j];
        MPI_Barrier(MPI_COMM_WORLD);
        auto t0 = std::chrono::steady_clock::now();
        MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(floats), MPI_FLOAT,
                      MPI_SUM, MPI_COMM_WORLD);
        t.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - t0)
                        .count());
      }
      std::sort(t.begin(), t.end());
      double bytes = double(floats * 4);
      l.reduceRates.emplace_back(bytes, bytes / t[t.size() / 2]);
    }
  }
  // The runtime's send of an activation-sized tensor (Comm::send: a fresh
  // private copy, then MPI_Isend), as a pipeline stage pays it.
  {
    const int64_t bytes = 256 << 10;
    std::vector<char> buf(size_t(bytes), 1);
    std::vector<double> t;
    for (int k = 0; k < rounds / 4 + 3; ++k) {
      if (me == 0) {
        auto t0 = std::chrono::steady_clock::now();
        comm.send(buf.data(), bytes, 1, 7);
        t.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - t0)
                        .count());
        comm.waitSends();
      } else {
        comm.recv(buf.data(), bytes, 0, 7);
      }
      comm.barrier();
    }
    if (me == 0) {
      std::sort(t.begin(), t.end());
      l.sendBandwidth = double(bytes) / t[t.size() / 2];
    }
  }
  if (me == 0) {
    std::ofstream out(path);
    out << l.latency << " " << l.bandwidth << " " << l.reduceLatency << " "
        << l.reduceBandwidth << " " << l.sendBandwidth;
    for (auto &[bytes, rate] : l.reduceRates)
      out << " " << bytes << " " << rate;
    out << "\n";
  }
  return 0;
}

/// Runs this program under mpirun -np 2 for the link figures.
bool runLinks(const Options &o, Link &l) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return false;
  std::string exe(self, size_t(n));
  char tmpl[] = "/tmp/frenzy-calibrate-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0)
    return false;
  close(fd);
  // One core each, as frenzy-launch runs ranks that do not outnumber the
  // cores: unbound, under SCHED_FIFO beside another job's ranks, both could
  // land on one core, where the spinning one starves the other.
  std::vector<std::string> args = {"-np", "2", "--oversubscribe"};
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
    args.insert(args.end(), {"--map-by", "core", "--bind-to", "core"});
  else
    args.insert(args.end(), {"--bind-to", "none"});
  args.insert(args.end(), {exe, std::string("--links-only=") + tmpl});
  if (o.quick)
    args.push_back("--quick");
  bool ran = runMpirun(args);
  std::ifstream in(tmpl);
  bool ok = ran && (in >> l.latency >> l.bandwidth >> l.reduceLatency >>
             l.reduceBandwidth >> l.sendBandwidth);
  for (double bytes, rate; ok && in >> bytes >> rate;)
    l.reduceRates.emplace_back(bytes, rate);
  unlink(tmpl);
  return ok;
}

std::string cpuName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown CPU";
}

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "?" : one;
}

void writeProfile(const Options &o, const KernelProfile &k, const Link &l,
                  const SharedAllReduce &sh, const Contention &con,
                  const ColdTurn &cold, double idleWake,
                  const std::string &loadBefore) {
  std::ostringstream y;
  char buf[256];
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  y << "# Device profile written by frenzy-calibrate (docs/calibration.md).\n"
    << "# Rates are per kernel call at the given size (flops or bytes moved);\n"
    << "# the cost model interpolates between sizes.\n"
    << "frenzy_profile: 1\n"
    << "gpu_type: " << o.gpuType << "\n"
    << "device: \"" << cpuName() << ", 1 thread\"\n"
    << "measured: \"" << when << ", load average " << loadBefore << " -> "
    << loadAverage() << "\"\n";
  std::snprintf(buf, sizeof(buf), "op_overhead_us: %.3f\ncopy_gbs: %.2f\n",
                k.opOverheadSeconds * 1e6, k.copyBytesPerSecond / 1e9);
  y << buf;
  // CPU ranks share these cores (GPU types: omit it).
  std::snprintf(buf, sizeof(buf), "cores: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
  y << buf;
  auto points = [&](const char *key, const std::vector<Point> &pts,
                    double unit) {
    y << key << ":\n";
    std::vector<Point> sorted = pts;
    std::sort(sorted.begin(), sorted.end(),
              [](const Point &a, const Point &b) { return a.size < b.size; });
    for (const Point &p : sorted) {
      std::snprintf(buf, sizeof(buf), "  - { size: %.6g, rate: %.3f }  # %s\n",
                    p.size, p.rate / unit, p.what.c_str());
      y << buf;
    }
  };
  points("matmul_gflops", k.matmul, 1e9);
  points("attention_gflops", k.attention, 1e9);
  points("memory_gbs", k.memory, 1e9);
  if (!k.opRates.empty()) {
    y << "kernel_gbs:   # memory-bound kernels inside the step of "
      << k.reference << "\n";
    std::vector<std::pair<std::string, Point>> rates = k.opRates;
    std::sort(rates.begin(), rates.end(), [](const auto &a, const auto &b) {
      return a.first != b.first ? a.first < b.first
                                : a.second.size < b.second.size;
    });
    for (auto &[op, pt] : rates) {
      std::snprintf(buf, sizeof(buf),
                    "  - { op: %s, size: %.6g, rate: %.3f }\n", op.c_str(),
                    pt.size, pt.rate / 1e9);
      y << buf;
    }
  }
  std::snprintf(buf, sizeof(buf),
                "links:   # two MPI ranks of this machine (shared memory)\n"
                "  - { kind: shm, latency_us: %.3f, bandwidth_gbs: %.3f, "
                "allreduce_latency_us: %.3f, allreduce_bandwidth_gbs: %.3f }\n",
                l.latency * 1e6, l.bandwidth / 1e9, l.reduceLatency * 1e6,
                l.reduceBandwidth / 1e9);
  y << buf;
  if (!l.reduceRates.empty())
    y << "allreduce_gbs:   # two ranks, by buffer bytes, buffers out of cache\n";
  for (auto &[bytes, rate] : l.reduceRates) {
    std::snprintf(buf, sizeof(buf), "  - { size: %.6g, rate: %.6g }\n", bytes,
                  rate / 1e9);
    y << buf;
  }
  if (sh.bandwidth > 0) {
    std::snprintf(buf, sizeof(buf),
                  "shared_allreduce: { round_us: %.3f, bandwidth_gbs: %.3f }\n",
                  sh.roundSeconds * 1e6, sh.bandwidth / 1e9);
    y << "# all-reduce among ranks sharing the cores (bound round-robin): "
      << sh.what << "\n"
      << buf;
  }
  if (!con.slowdown.empty()) {
    y << "contention:   # CPU time of a step with k ranks per core / alone ("
      << con.what << ")\n";
    for (auto &[perCore, f] : con.slowdown) {
      std::snprintf(buf, sizeof(buf),
                    "  - { ranks_per_core: %d, slowdown: %.3f }\n", perCore, f);
      y << buf;
    }
  }
  if (!cold.extra.empty()) {
    std::snprintf(buf, sizeof(buf), "  state_bytes: %.0f\n  points:\n",
                  cold.stateBytes);
    y << "cold_turn:   # extra CPU time of a step after other data evicted "
         "the caches ("
      << cold.what << ")\n"
      << buf;
    for (auto &[bytes, s] : cold.extra) {
      std::snprintf(buf, sizeof(buf),
                    "    - { evicted_bytes: %.0f, extra_us: %.3f }\n", bytes,
                    s * 1e6);
      y << buf;
    }
  }
  if (idleWake > 0) {
    std::snprintf(buf, sizeof(buf),
                  "idle_wake_us: %.1f   # a sleeper's wake on an idle core "
                  "(futex, median)\n",
                  idleWake * 1e6);
    y << buf;
  }
  std::ofstream out(o.out, std::ios::trunc);
  out << y.str();
  if (!out)
    throw rt::RuntimeError(o.out + ": cannot write the profile");
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      o.out = argv[++i];
    else if (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != '-')
      o.out = a.substr(2);
    else if (a.rfind("--gpu-type=", 0) == 0)
      o.gpuType = a.substr(11);
    else if (a.rfind("--links-only=", 0) == 0)
      o.linksOut = a.substr(13);
    else if (a.rfind("--shared-only=", 0) == 0)
      o.sharedOut = a.substr(14);
    else if (a.rfind("--plan=", 0) == 0)
      o.plans.push_back(a.substr(7));
    else if (a.rfind("--cluster=", 0) == 0)
      o.cluster = a.substr(10);
    else if (a.rfind("--launch-agent=", 0) == 0)
      o.launchAgent = a.substr(15);
    else if (a.rfind("--launch-timeout=", 0) == 0)
      o.launchTimeout = wholeNumber("--launch-timeout", a.substr(17), 1, 86400);
    else if (a.rfind("--sizes=", 0) == 0)
      o.sizes = a.substr(8);
    else if (a.rfind("--rounds=", 0) == 0)
      o.rounds = wholeNumber("--rounds", a.substr(9), 1, 10000);
    else if (a == "--network-rank")
      o.networkRank = true;
    else if (a.rfind("--launch-probe=", 0) == 0)
      o.probe = a.substr(15);
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--force")
      o.force = true;
    else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else
      throw rt::RuntimeError("unknown argument '" + a +
                             "' (frenzy-calibrate --help lists the options)");
  }
  if (o.linksOut.empty() && o.sharedOut.empty() && o.out.empty() &&
      o.cluster.empty() && o.probe.empty())
    throw rt::RuntimeError("no output file (-o PROFILE.yaml; frenzy-calibrate "
                           "--help lists the options)");
  if (o.gpuType.empty())
    throw rt::RuntimeError("--gpu-type needs the cluster file's type name");
  return o;
}

/// --cluster: the links between the cluster file's nodes.
int links(const Options &o) {
#ifdef FRENZY_CALIBRATE_LINKS
  LinkOptions l;
  l.cluster = o.cluster;
  l.out = o.out;
  l.force = o.force;
  l.launchAgent = o.launchAgent;
  l.launchTimeout = o.launchTimeout;
  l.net.sizes = parseSizes(!o.sizes.empty() ? o.sizes
                           : o.quick        ? "8,64K,1M,4M"
                                            : "8,64K,256K,1M,4M,16M");
  l.net.rounds = int(o.rounds > 0 ? o.rounds : o.quick ? 3 : 10);
  return o.networkRank ? networkRank(l) : calibrateLinks(l);
#else
  throw rt::RuntimeError("--cluster: this frenzy-calibrate was built without "
                         "the cluster file reader (a runtime-only build); "
                         "use the one of the full build (docs/runtime.md)");
#endif
}

} // namespace

int main(int argc, char **argv) {
  try {
    Options o = parse(argc, argv);
#ifdef FRENZY_CALIBRATE_LINKS
    if (!o.probe.empty()) // a node answering the host launcher
      return rt::probeBack(o.probe);
#endif
    if (!o.cluster.empty())
      return links(o);
    openblas_set_num_threads(1); // the CPU backend's ranks run one thread
    if (!o.linksOut.empty())
      return measureLinks(o.linksOut, o.quick);
    if (!o.sharedOut.empty())
      return measureSharedRun(o.sharedOut, o.quick);
    struct stat st;
    if (!o.force && ::stat(o.out.c_str(), &st) == 0)
      throw rt::RuntimeError(o.out + " exists; give --force to replace it or "
                                     "name a new file");
    {
      std::ofstream probe(o.out, std::ios::app);
      if (!probe)
        throw rt::RuntimeError(o.out + ": cannot write (" +
                               std::strerror(errno) + ")");
    }
    std::string load = loadAverage();
    std::printf("frenzy-calibrate: measuring kernels (%s)\n", cpuName().c_str());
    std::fflush(stdout);
    KernelProfile k = measureKernels(o.quick);
    for (const std::string &plan : o.plans) {
      std::printf("frenzy-calibrate: timing the step of %s\n", plan.c_str());
      std::fflush(stdout);
      measurePlan(plan, o.quick ? 3 : 10, k);
    }
    std::printf("frenzy-calibrate: measuring 2-rank MPI links\n");
    std::fflush(stdout);
    Link l;
    if (!runLinks(o, l)) {
      ::unlink(o.out.c_str());
      throw rt::RuntimeError("the 2-rank MPI measurement failed (is Open "
                             "MPI's mpirun installed? apt-get install "
                             "openmpi-bin)");
    }
    k.copyBytesPerSecond = l.sendBandwidth; // the send as the runtime does it
    std::printf("frenzy-calibrate: measuring all-reduces among ranks sharing "
                "the cores\n");
    std::fflush(stdout);
    SharedAllReduce sh;
    {
      char self[4096];
      ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
      if (len > 0)
        sh = measureShared(std::string(self, size_t(len)),
                           int(sysconf(_SC_NPROCESSORS_ONLN)), o.quick);
    }
    if (sh.bandwidth <= 0)
      std::printf("frenzy-calibrate: no shared-core all-reduce measured (one "
                  "core, or mpirun failed): the profile leaves it out\n");
    Contention con;
    ColdTurn cold;
    if (!o.plans.empty()) {
      std::printf("frenzy-calibrate: timing the step of %s beside other "
                  "ranks\n", o.plans.back().c_str());
      std::fflush(stdout);
      con = measureContention(o.plans.back(),
                              int(sysconf(_SC_NPROCESSORS_ONLN)), o.quick);
      cold = measureColdTurn(o.plans.back(),
                             int(sysconf(_SC_NPROCESSORS_ONLN)), o.quick);
    }
    double idleWake =
        measureIdleWake(int(sysconf(_SC_NPROCESSORS_ONLN)), o.quick);
    writeProfile(o, k, l, sh, con, cold, idleWake, load);
    std::printf("frenzy-calibrate: wrote %s (GEMM %.1f-%.1f GFLOPS, memory "
                "%.1f-%.1f GB/s, %.2f us per kernel, MPI %.1f us / %.2f GB/s)\n",
                o.out.c_str(),
                std::min_element(k.matmul.begin(), k.matmul.end(),
                                 [](auto &a, auto &b) { return a.rate < b.rate; })
                        ->rate / 1e9,
                std::max_element(k.matmul.begin(), k.matmul.end(),
                                 [](auto &a, auto &b) { return a.rate < b.rate; })
                        ->rate / 1e9,
                std::min_element(k.memory.begin(), k.memory.end(),
                                 [](auto &a, auto &b) { return a.rate < b.rate; })
                        ->rate / 1e9,
                std::max_element(k.memory.begin(), k.memory.end(),
                                 [](auto &a, auto &b) { return a.rate < b.rate; })
                        ->rate / 1e9,
                k.opOverheadSeconds * 1e6, l.latency * 1e6, l.bandwidth / 1e9);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "frenzy-calibrate: error: %s\n", e.what());
    return 1;
  }
}
