//===- JobArtifacts.cpp - sbatch scripts and plans of placed jobs ---------===//
//
// A plan is made for the GPUs the job was given, not the whole cluster: the
// job's nodes (with the counts it holds there) go to a cluster file of their
// own, and frenzy-opt runs as a separate process so that frenzy-sched links
// no MLIR. The plan's rank -> node list (read back from plan.bin, protobuf
// only) decides the order of the script's tasks (Sbatch.h).
//
//===----------------------------------------------------------------------===//
#include "JobArtifacts.h"

#include "frenzy/Scheduler/Sbatch.h"
#include "plan.pb.h"
#include "plan/PlanFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace frenzy;
using namespace frenzy::sched;

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "frenzy-sched: error: " << msg << "\n";
  return 1;
}

/// Opens a new file; an existing one is the user's and is never replaced.
static std::unique_ptr<llvm::raw_fd_ostream> create(const std::string &path) {
  std::error_code ec;
  auto os = std::make_unique<llvm::raw_fd_ostream>(
      path, ec, llvm::sys::fs::CD_CreateNew);
  if (ec) {
    fail(path + ": cannot create: " + ec.message() +
         (ec == std::errc::file_exists ? " (choose an empty --out-dir)" : ""));
    return nullptr;
  }
  return os;
}

/// Shortest exact-enough form of a figure for YAML ("100", "12.5").
static std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

/// An absolute path: an sbatch script runs in whatever directory sbatch was
/// called from.
static std::string absolute(const std::string &path) {
  llvm::SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return p.str().str();
}

llvm::Expected<std::vector<std::string>>
frenzy::sched::planRankNodes(const std::string &plan) {
  auto buf = llvm::MemoryBuffer::getFile(plan);
  if (!buf)
    return llvm::createStringError(
        buf.getError(), "%s: cannot read the plan frenzy-opt wrote: %s",
        plan.c_str(), buf.getError().message().c_str());
  std::string bytes = (*buf)->getBuffer().str();
  size_t offset = 0;
  std::string bad = plan::decodePlanFile(bytes, offset);
  plan::Plan p;
  if (!bad.empty() ||
      !p.ParseFromArray(bytes.data() + offset, int(bytes.size() - offset)))
    return llvm::createStringError(
        std::errc::invalid_argument, "%s: %s", plan.c_str(),
        bad.empty() ? "does not parse" : bad.c_str());
  std::vector<std::string> nodes;
  for (const plan::Rank &r : p.ranks())
    nodes.push_back(r.node());
  return nodes;
}

/// planRankNodes into `nodes`; false after one error line.
static bool readRankNodes(const std::string &plan,
                          std::vector<std::string> &nodes) {
  auto got = planRankNodes(plan);
  if (!got) {
    fail(llvm::toString(got.takeError()));
    return false;
  }
  nodes = std::move(*got);
  return true;
}

static void writeJobCluster(const std::string &name, const Placement &placement,
                            const SchedCluster &c, llvm::raw_ostream &os) {
  const ClusterSpec &spec = c.spec();
  os << "# The GPUs frenzy-sched gave job '" << name << "'.\n";
  os << "name: " << name << "\nnodes:\n";
  for (const NodeGrant &g : placement) {
    const ClusterNode &n = spec.nodes[g.node];
    os << "  - {name: " << n.name << ", gpu: " << n.gpu
       << ", count: " << g.count << ", link: " << n.link;
    if (n.linkGBs > 0)
      os << ", link_bandwidth_gbs: " << num(n.linkGBs);
    if (!n.host.empty())
      os << ", host: " << n.host;
    os << "}\n";
  }
  os << llvm::formatv("network: {bandwidth_gbps: {0}, latency_us: {1}}\n",
                      num(spec.network.bandwidthGbps),
                      num(spec.network.latencyUs));
  if (!spec.gpuTypes.empty()) {
    os << "gpu_types:\n";
    for (const GpuType &g : spec.gpuTypes)
      os << "  - {name: " << g.name
         << ", memory_gib: " << num(double(g.memoryBytes) / double(1ll << 30))
         << ", tflops: " << num(g.tensorTflops)
         << ", bandwidth_gbs: " << num(g.memoryGBs)
         << ", bf16: " << (g.bf16 ? "true" : "false") << "}\n";
  }
}

int frenzy::sched::makeJobPlan(const JobSpec &spec, const Placement &p,
                                const SchedCluster &c,
                                const std::string &frenzyOpt,
                                const std::string &base) {
  std::string clusterPath = base + ".cluster.yaml", plan = base + ".plan.bin";
  {
    auto os = create(clusterPath);
    if (!os)
      return 1;
    writeJobCluster(spec.name, p, c, *os);
  }
  std::string gb = "--global-batch=" + std::to_string(spec.globalBatch);
  // A one-GPU plan runs the whole batch in one step (multi-GPU plans bind
  // the micro-batch themselves).
  std::string b = "--batch=" + std::to_string(spec.globalBatch);
  std::string seq = "--seq=" + std::to_string(spec.seq);
  std::string cl = "--cluster=" + clusterPath;
  llvm::SmallVector<llvm::StringRef> args = {frenzyOpt, spec.onnx, cl, gb, b,
                                             seq,       "-o",      plan};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(frenzyOpt, args, std::nullopt, {}, 0, 0,
                                     &err);
  if (rc != 0)
    return fail("job '" + spec.name + "': " + frenzyOpt + " failed (exit " +
                llvm::Twine(rc) + (err.empty() ? "" : ": ") + err +
                ") making " + plan);
  return 0;
}

int frenzy::sched::writeJobArtifacts(const SimResult &r,
                                     const std::vector<JobSpec> &jobs,
                                     const SchedCluster &c,
                                     const ArtifactOptions &o) {
  if (std::error_code ec = llvm::sys::fs::create_directories(o.dir))
    return fail(o.dir + ": cannot create directory: " + ec.message());
  // Check every name first: a refusal must not leave half the jobs written.
  for (const JobResult &jr : r.jobs)
    for (const char *ext :
         {".sbatch", ".cluster.yaml", ".plan.bin", ".hosts"}) {
      llvm::SmallString<256> path(o.dir);
      llvm::sys::path::append(path, jr.name + ext);
      if (!jr.placement.empty() && llvm::sys::fs::exists(path))
        return fail(path + ": exists; frenzy-sched never overwrites (choose "
                           "an empty --out-dir)");
    }
  for (const JobResult &jr : r.jobs) {
    if (jr.placement.empty())
      continue;
    const JobSpec *spec = nullptr;
    for (const JobSpec &j : jobs)
      if (j.name == jr.name)
        spec = &j;
    llvm::SmallString<256> base(absolute(o.dir));
    llvm::sys::path::append(base, jr.name);
    std::string plan = (base + ".plan.bin").str();
    std::string clusterPath = (base + ".cluster.yaml").str();
    if (!o.frenzyOpt.empty() && !spec->onnx.empty()) {
      if (int rc = makeJobPlan(*spec, jr.placement, c, o.frenzyOpt,
                               base.str().str()))
        return rc;
    } else {
      auto os = create(clusterPath);
      if (!os)
        return 1;
      writeJobCluster(jr.name, jr.placement, c, *os);
    }
    SbatchJob sj;
    bool planMade = !o.frenzyOpt.empty() && !spec->onnx.empty();
    if (planMade && !readRankNodes(plan, sj.rankNodes))
      return 1;
    if (std::string why = planOrderProblem(jr.placement, c, sj.rankNodes);
        !why.empty())
      llvm::errs() << "frenzy-sched: warning: job '" << jr.name << "': " << why
                   << "; its ranks will refuse to start (make the plan "
                      "with frenzy-opt --layout so that each GPU type's "
                      "ranks are consecutive)\n";
    if (planMade &&
        sbatchComponents(jr.placement, c, sj.rankNodes).size() == 1) {
      sj.hostfile = (base + ".hosts").str();
      auto hosts = create(sj.hostfile);
      if (!hosts)
        return 1;
      for (const std::string &n : sj.rankNodes)
        *hosts << n << "\n";
    }
    if (!spec->data.empty())
      sj.data = absolute(spec->data);
    if (!o.frenzyLaunch.empty())
      sj.launcher = absolute(o.frenzyLaunch);
    sj.name = jr.name;
    sj.placement = jr.placement;
    sj.predictedSeconds = jr.stepSeconds * double(spec->steps);
    sj.steps = spec->steps;
    sj.plan = plan;
    sj.checkpointDir = (base + ".ckpt").str();
    if (spec->onnx.empty())
      sj.note = "no ONNX model was given: make the plan with frenzy-opt "
                "MODEL.onnx --cluster=" + clusterPath + " -o " + plan;
    else if (o.frenzyOpt.empty())
      sj.note = "make the plan with frenzy-opt " + spec->onnx +
                " --cluster=" + clusterPath + " -o " + plan +
                " (or run frenzy-sched with --frenzy-opt)";
    auto os = create((base + ".sbatch").str());
    if (!os)
      return 1;
    writeSbatchScript(sj, c, *os);
  }
  return 0;
}
