//===- DeviceProfile.cpp - measured speeds of one device type -------------===//
//
// The file frenzy-calibrate writes (tools/frenzy-calibrate), read with
// LLVM's YAML I/O. Rates between measured sizes are interpolated
// log-linearly in size (GEMM efficiency rises with size, memory rates fall
// once tensors leave the caches); outside the measured range the nearest
// point's rate holds.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Cluster/DeviceProfile.h"

#include "frenzy/Cluster/GpuCatalogue.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"

#include <algorithm>
#include <optional>
#include <cmath>

using namespace frenzy;

namespace {

/// The file as written: rates in G units, times in microseconds.
struct ProfileFile {
  int version = 0;
  std::string gpuType, device, measured;
  double opOverheadUs = 0, copyGBs = 0;
  int cores = 0;
  struct Shared {
    double roundUs = 0, gbs = 0;
  };
  std::optional<Shared> shared;
  struct Slowdown {
    int perCore = 0;
    double factor = 0;
  };
  std::vector<Slowdown> contention;
  struct Evicted {
    double bytes = 0, extraUs = 0;
  };
  struct Cold {
    double stateBytes = 0;
    std::vector<Evicted> points;
  };
  std::optional<Cold> cold;
  double idleWakeUs = 0;
  struct Point {
    double size = 0, rate = 0;
  };
  std::vector<Point> matmul, attention, memory, allReduce;
  struct Link {
    std::string kind;
    double latencyUs = 0, gbs = 0, reduceLatencyUs = 0, reduceGBs = 0;
  };
  std::vector<Link> links;
  struct Kernel {
    std::string op;
    double size = 1, rate = 0;
  };
  std::vector<Kernel> kernels;
};

} // namespace

template <> struct llvm::yaml::MappingTraits<ProfileFile::Point> {
  static void mapping(IO &io, ProfileFile::Point &p) {
    io.mapRequired("size", p.size);
    io.mapRequired("rate", p.rate);
  }
  static std::string validate(IO &, ProfileFile::Point &p) {
    return p.size > 0 && p.rate > 0 ? "" : "size and rate must be positive";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ProfileFile::Point)

template <> struct llvm::yaml::MappingTraits<ProfileFile::Link> {
  static void mapping(IO &io, ProfileFile::Link &l) {
    io.mapRequired("kind", l.kind);
    io.mapRequired("latency_us", l.latencyUs);
    io.mapRequired("bandwidth_gbs", l.gbs);
    io.mapRequired("allreduce_latency_us", l.reduceLatencyUs);
    io.mapRequired("allreduce_bandwidth_gbs", l.reduceGBs);
  }
  static std::string validate(IO &, ProfileFile::Link &l) {
    return l.latencyUs >= 0 && l.gbs > 0 && l.reduceLatencyUs >= 0 &&
                   l.reduceGBs > 0
               ? ""
               : "link '" + l.kind + "': latencies must be >= 0 and "
                                     "bandwidths positive";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ProfileFile::Link)

template <> struct llvm::yaml::MappingTraits<ProfileFile::Shared> {
  static void mapping(IO &io, ProfileFile::Shared &s) {
    io.mapRequired("round_us", s.roundUs);
    io.mapRequired("bandwidth_gbs", s.gbs);
  }
  static std::string validate(IO &, ProfileFile::Shared &s) {
    return s.roundUs >= 0 && s.gbs > 0
               ? ""
               : "shared_allreduce: round_us must be >= 0 and bandwidth_gbs "
                 "positive";
  }
};

template <> struct llvm::yaml::MappingTraits<ProfileFile::Slowdown> {
  static void mapping(IO &io, ProfileFile::Slowdown &s) {
    io.mapRequired("ranks_per_core", s.perCore);
    io.mapRequired("slowdown", s.factor);
  }
  static std::string validate(IO &, ProfileFile::Slowdown &s) {
    return s.perCore >= 1 && s.factor > 0
               ? ""
               : "contention: ranks_per_core must be >= 1 and slowdown "
                 "positive";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ProfileFile::Slowdown)

template <> struct llvm::yaml::MappingTraits<ProfileFile::Evicted> {
  static void mapping(IO &io, ProfileFile::Evicted &e) {
    io.mapRequired("evicted_bytes", e.bytes);
    io.mapRequired("extra_us", e.extraUs);
  }
  static std::string validate(IO &, ProfileFile::Evicted &e) {
    return e.bytes > 0 && e.extraUs >= 0
               ? ""
               : "cold_turn: evicted_bytes must be positive and extra_us >= 0";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ProfileFile::Evicted)

template <> struct llvm::yaml::MappingTraits<ProfileFile::Cold> {
  static void mapping(IO &io, ProfileFile::Cold &c) {
    io.mapRequired("state_bytes", c.stateBytes);
    io.mapRequired("points", c.points);
  }
  static std::string validate(IO &, ProfileFile::Cold &c) {
    return c.stateBytes > 0 && !c.points.empty()
               ? ""
               : "cold_turn: state_bytes must be positive, with at least one "
                 "point";
  }
};

template <> struct llvm::yaml::MappingTraits<ProfileFile::Kernel> {
  static void mapping(IO &io, ProfileFile::Kernel &k) {
    io.mapRequired("op", k.op);
    io.mapOptional("size", k.size, 1.0);
    io.mapRequired("rate", k.rate);
  }
  static std::string validate(IO &, ProfileFile::Kernel &k) {
    return k.rate > 0 && k.size > 0
               ? ""
               : "kernel '" + k.op + "': size and rate must be positive";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(ProfileFile::Kernel)

template <> struct llvm::yaml::MappingTraits<ProfileFile> {
  static void mapping(IO &io, ProfileFile &f) {
    io.mapRequired("frenzy_profile", f.version);
    io.mapRequired("gpu_type", f.gpuType);
    io.mapOptional("device", f.device);
    io.mapOptional("measured", f.measured);
    io.mapRequired("op_overhead_us", f.opOverheadUs);
    io.mapRequired("copy_gbs", f.copyGBs);
    io.mapRequired("matmul_gflops", f.matmul);
    io.mapRequired("attention_gflops", f.attention);
    io.mapRequired("memory_gbs", f.memory);
    io.mapRequired("links", f.links);
    io.mapOptional("kernel_gbs", f.kernels);
    io.mapOptional("cores", f.cores, 0);
    io.mapOptional("allreduce_gbs", f.allReduce);
    io.mapOptional("shared_allreduce", f.shared);
    io.mapOptional("contention", f.contention);
    io.mapOptional("cold_turn", f.cold);
    io.mapOptional("idle_wake_us", f.idleWakeUs, 0.0);
  }
  static std::string validate(IO &, ProfileFile &f) {
    if (f.matmul.empty() || f.attention.empty() || f.memory.empty())
      return "matmul_gflops, attention_gflops and memory_gbs need at least "
             "one measured point";
    if (f.opOverheadUs < 0 || f.copyGBs <= 0)
      return "op_overhead_us must be >= 0 and copy_gbs positive";
    if (f.idleWakeUs < 0)
      return "idle_wake_us must be >= 0";
    return "";
  }
};

static double interpolate(const std::vector<RatePoint> &pts, double size) {
  if (pts.empty())
    return 0;
  if (size <= pts.front().size)
    return pts.front().rate;
  if (size >= pts.back().size)
    return pts.back().rate;
  auto hi = std::lower_bound(
      pts.begin(), pts.end(), size,
      [](const RatePoint &p, double s) { return p.size < s; });
  auto lo = hi - 1;
  double f = std::log(size / lo->size) / std::log(hi->size / lo->size);
  return lo->rate + f * (hi->rate - lo->rate);
}

double LinkProfile::allReduceSeconds(double bytes, double ranks) const {
  double share = 2.0 * (ranks - 1) / std::max(1.0, ranks);
  if (!reduceRates.empty() && bytes > 0) {
    // Below the smallest size measured: from the latency up to it.
    const RatePoint &first = reduceRates.front();
    if (bytes < first.size)
      return share * (reduceLatency + (first.size / first.rate - reduceLatency) *
                                          bytes / first.size);
    return share * bytes / interpolate(reduceRates, bytes);
  }
  return reduceLatency * std::max(1.0, std::log2(ranks)) +
         share * bytes / reduceBandwidth;
}

double DeviceProfile::kernelSeconds(KernelKind kind, double flops,
                                    double bytes) const {
  double s = opOverhead;
  double mem = bytes > 0 ? bytes / interpolate(memory, bytes) : 0;
  if (kind == KernelKind::MemoryBound)
    return s + mem;
  const std::vector<RatePoint> &pts =
      kind == KernelKind::Attention ? attention : matmul;
  double compute = flops > 0 ? flops / interpolate(pts, flops) : 0;
  return s + std::max(compute, mem);
}

double DeviceProfile::kernelSeconds(const std::string &op, KernelKind kind,
                                    double flops, double bytes) const {
  auto it = kernelRates.find(op);
  if (kind != KernelKind::MemoryBound || it == kernelRates.end())
    return kernelSeconds(kind, flops, bytes);
  return opOverhead + bytes / interpolate(it->second, bytes);
}

/// Rounds of a recursive-doubling all-reduce among n ranks (Open MPI's
/// choice for small buffers): log2 of the largest power of two <= n, and
/// two more (fold in, hand back) when n is not a power of two.
static int allReduceRounds(int n) {
  if (n <= 1)
    return 0;
  int pow2 = 1, rounds = 0;
  while (pow2 * 2 <= n) {
    pow2 *= 2;
    ++rounds;
  }
  return rounds + (pow2 == n ? 0 : 2);
}

double DeviceProfile::sharedAllReduceSeconds(double bytes, int ranks) const {
  if (sharedReduceBandwidth <= 0)
    return -1;
  if (ranks <= 1)
    return 0;
  return allReduceRounds(ranks) * sharedRoundSeconds +
         2.0 * (ranks - 1) / ranks * bytes / sharedReduceBandwidth;
}

double DeviceProfile::coldTurnSeconds(double evictedBytes,
                                      double stateBytes) const {
  if (coldTurn.empty() || coldStateBytes <= 0 || evictedBytes <= 0 ||
      stateBytes <= 0)
    return 0;
  // Linear in the evicted bytes between measured points; nothing below
  // none evicted, the largest measured beyond the last point.
  double prevBytes = 0, prevExtra = 0, extra = coldTurn.back().second;
  for (const auto &[bytes, seconds] : coldTurn) {
    if (evictedBytes <= bytes) {
      extra = prevExtra + (seconds - prevExtra) * (evictedBytes - prevBytes) /
                              (bytes - prevBytes);
      break;
    }
    prevBytes = bytes;
    prevExtra = seconds;
  }
  return extra * stateBytes / coldStateBytes;
}

double DeviceProfile::contentionSlowdown(int ranks) const {
  if (ranks <= 1 || contention.empty() || cores <= 0)
    return 1.0;
  int perCore = (ranks + cores - 1) / cores;
  auto it = contention.upper_bound(perCore); // the nearest measured <= it
  // Other ranks do not speed a rank up: a measured factor below 1 is the
  // machine's noise between two timings.
  return it == contention.begin() ? 1.0 : std::max(1.0, std::prev(it)->second);
}

double DeviceProfile::peakFlops() const {
  double best = 0;
  for (const RatePoint &p : matmul)
    best = std::max(best, p.rate);
  return best;
}

const LinkProfile *DeviceProfile::link(const std::string &kind) const {
  auto it = links.find(kind);
  if (it == links.end())
    it = links.find("shm");
  if (it == links.end())
    it = links.begin();
  return it == links.end() ? nullptr : &it->second;
}

DeviceProfile DeviceProfile::fromDatasheet(const GpuType &g) {
  // The defaults of docs/partitioner.md: contractions at 60% of the
  // tensor peak, memory-bound kernels at 70% of the memory bandwidth.
  DeviceProfile p;
  p.gpuType = g.name;
  p.matmul = {{1, g.tensorTflops * 1e12 * 0.6}};
  p.attention = p.matmul;
  p.memory = {{1, g.memoryGBs * 1e9 * 0.7}};
  p.copyBandwidth = g.memoryGBs * 1e9 * 0.7;
  return p;
}

llvm::Expected<DeviceProfile>
frenzy::readDeviceProfile(const std::string &path, const std::string &gpuType) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(
        buf.getError(),
        "profile %s: cannot read: %s (make one with frenzy-calibrate)",
        path.c_str(), buf.getError().message().c_str());
  std::string diag;
  auto handler = [](const llvm::SMDiagnostic &d, void *ctx) {
    llvm::raw_string_ostream os(*static_cast<std::string *>(ctx));
    if (static_cast<std::string *>(ctx)->empty())
      os << d.getFilename() << ":" << d.getLineNo() << ":"
         << d.getColumnNo() + 1 << ": " << d.getMessage();
  };
  ProfileFile f;
  llvm::yaml::Input in((*buf)->getMemBufferRef(), nullptr, handler, &diag);
  in >> f;
  if (in.error())
    return llvm::createStringError(
        in.error(), "%s (re-run frenzy-calibrate to write a valid profile)",
        diag.empty() ? ("profile " + path + ": invalid").c_str()
                     : diag.c_str());
  if (f.version != kDeviceProfileVersion)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "profile %s: format version %d, this Frenzy reads version %d; "
        "re-run frenzy-calibrate",
        path.c_str(), f.version, kDeviceProfileVersion);
  if (!llvm::StringRef(f.gpuType).equals_insensitive(gpuType))
    return llvm::createStringError(
        std::errc::invalid_argument,
        "profile %s: measured for GPU type '%s', not '%s'; calibrate this "
        "type (frenzy-calibrate --gpu-type=%s) or name its own profile",
        path.c_str(), f.gpuType.c_str(), gpuType.c_str(), gpuType.c_str());
  DeviceProfile p;
  p.gpuType = f.gpuType;
  p.device = f.device;
  p.measured = f.measured;
  p.opOverhead = f.opOverheadUs * 1e-6;
  p.copyBandwidth = f.copyGBs * 1e9;
  auto points = [](const std::vector<ProfileFile::Point> &in, double unit) {
    std::vector<RatePoint> out;
    for (const ProfileFile::Point &q : in)
      out.push_back({q.size, q.rate * unit});
    std::sort(out.begin(), out.end(), [](const RatePoint &a, const RatePoint &b) {
      return a.size < b.size;
    });
    return out;
  };
  p.matmul = points(f.matmul, 1e9);
  p.attention = points(f.attention, 1e9);
  p.memory = points(f.memory, 1e9);
  for (const ProfileFile::Link &l : f.links)
    p.links[l.kind] = {l.latencyUs * 1e-6, l.gbs * 1e9,
                       l.reduceLatencyUs * 1e-6, l.reduceGBs * 1e9};
  // Measured between two ranks of the node: the shared-memory link's.
  if (p.links.count("shm"))
    p.links["shm"].reduceRates = points(f.allReduce, 1e9);
  for (const ProfileFile::Kernel &k : f.kernels)
    p.kernelRates[k.op].push_back({k.size, k.rate * 1e9});
  for (auto &[op, pts] : p.kernelRates)
    std::sort(pts.begin(), pts.end(), [](const RatePoint &a, const RatePoint &b) {
      return a.size < b.size;
    });
  p.cores = std::max(0, f.cores);
  for (const ProfileFile::Slowdown &c : f.contention)
    p.contention[c.perCore] = c.factor;
  p.idleWake = f.idleWakeUs * 1e-6;
  if (f.cold) {
    p.coldStateBytes = f.cold->stateBytes;
    for (const ProfileFile::Evicted &e : f.cold->points)
      p.coldTurn.push_back({e.bytes, e.extraUs * 1e-6});
    std::sort(p.coldTurn.begin(), p.coldTurn.end());
  }
  if (f.shared) {
    p.sharedRoundSeconds = f.shared->roundUs * 1e-6;
    p.sharedReduceBandwidth = f.shared->gbs * 1e9;
  }
  p.calibrated = true;
  return p;
}
