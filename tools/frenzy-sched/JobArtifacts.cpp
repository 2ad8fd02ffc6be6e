//===- JobArtifacts.cpp - sbatch scripts and plans of placed jobs ---------===//
//
// A plan is made for the GPUs the job was given, not the whole cluster: the
// job's nodes (with the counts it holds there) go to a cluster file of their
// own, and frenzy-opt runs as a separate process so that frenzy-sched links
// no MLIR.
//
//===----------------------------------------------------------------------===//
#include "JobArtifacts.h"

#include "frenzy/Scheduler/Sbatch.h"

#include "llvm/Support/FileSystem.h"
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

static void writeJobCluster(const JobResult &r, const SchedCluster &c,
                            llvm::raw_ostream &os) {
  const ClusterSpec &spec = c.spec();
  os << "# The GPUs frenzy-sched gave job '" << r.name << "'.\n";
  os << "name: " << r.name << "\nnodes:\n";
  for (const NodeGrant &g : r.placement) {
    const ClusterNode &n = spec.nodes[g.node];
    os << "  - {name: " << n.name << ", gpu: " << n.gpu
       << ", count: " << g.count << ", link: " << n.link;
    if (n.linkGBs > 0)
      os << ", link_bandwidth_gbs: " << n.linkGBs;
    os << "}\n";
  }
  os << "network: {bandwidth_gbps: " << spec.network.bandwidthGbps
     << ", latency_us: " << spec.network.latencyUs << "}\n";
  if (!spec.gpuTypes.empty()) {
    os << "gpu_types:\n";
    for (const GpuType &g : spec.gpuTypes)
      os << "  - {name: " << g.name
         << ", memory_gib: " << double(g.memoryBytes) / double(1ll << 30)
         << ", tflops: " << g.tensorTflops
         << ", bandwidth_gbs: " << g.memoryGBs
         << ", bf16: " << (g.bf16 ? "true" : "false") << "}\n";
  }
}

int frenzy::sched::writeJobArtifacts(const SimResult &r,
                                     const std::vector<JobSpec> &jobs,
                                     const SchedCluster &c,
                                     const ArtifactOptions &o) {
  if (std::error_code ec = llvm::sys::fs::create_directories(o.dir))
    return fail(o.dir + ": cannot create directory: " + ec.message());
  for (const JobResult &jr : r.jobs) {
    if (jr.placement.empty())
      continue;
    const JobSpec *spec = nullptr;
    for (const JobSpec &j : jobs)
      if (j.name == jr.name)
        spec = &j;
    llvm::SmallString<256> base(o.dir);
    llvm::sys::path::append(base, jr.name);
    std::string plan = (base + ".plan.bin").str();
    if (!o.frenzyOpt.empty() && !spec->onnx.empty()) {
      std::string clusterPath = (base + ".cluster.yaml").str();
      {
        auto os = create(clusterPath);
        if (!os)
          return 1;
        writeJobCluster(jr, c, *os);
      }
      if (llvm::sys::fs::exists(plan))
        return fail(plan + ": exists; choose an empty --out-dir");
      std::string gb = "--global-batch=" + std::to_string(spec->globalBatch);
      std::string seq = "--seq=" + std::to_string(spec->seq);
      std::string cl = "--cluster=" + clusterPath;
      llvm::SmallVector<llvm::StringRef> args = {
          o.frenzyOpt, spec->onnx, cl, gb, seq, "-o", plan};
      std::string err;
      int rc = llvm::sys::ExecuteAndWait(o.frenzyOpt, args, std::nullopt, {},
                                         0, 0, &err);
      if (rc != 0)
        return fail("job '" + jr.name + "': " + o.frenzyOpt +
                    " failed (exit " + llvm::Twine(rc) + (err.empty() ? "" : ": ") +
                    err + ") making " + plan);
    }
    SbatchJob sj;
    sj.name = jr.name;
    sj.placement = jr.placement;
    sj.predictedSeconds = jr.stepSeconds * double(spec->steps);
    sj.steps = spec->steps;
    sj.plan = plan;
    sj.checkpointDir = (base + ".ckpt").str();
    auto os = create((base + ".sbatch").str());
    if (!os)
      return 1;
    writeSbatchScript(sj, c, *os);
  }
  return 0;
}
