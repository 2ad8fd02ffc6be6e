//===- JobQueueFile.cpp - read and write the job queue YAML ---------------===//
//
// jobs:
//   - name: bert-1            # unique
//     model: {name: gpt-350m, layers: 24, hidden: 1024, heads: 16, vocab: 50257}
//     onnx: m.onnx            # instead of model: with options: TABLE
//     options: m.options      # a frenzy-opt --job-options table
//     data: tokens.bin        # optional: the sbatch script's --data
//     global_batch: 32
//     seq: 1024
//     steps: 2000             # or tokens: N (steps = tokens / (batch*seq))
//     arrival: 0              # seconds
//     deadline: 7200          # optional, seconds after time 0
//     priority: 0             # optional, larger first
//     user_gpus: 4            # the FIFO/Gavel baselines' fixed request
//     user_gpu_type: T4       # optional
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Traces.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"

using namespace frenzy;
using namespace frenzy::sched;

namespace {
struct QueueFile {
  std::vector<JobSpec> jobs;
};
/// What mapping() needs to record a job's line.
struct ParseContext {
  llvm::StringRef path, text;
};
} // namespace

template <> struct llvm::yaml::MappingTraits<ModelDesc> {
  static void mapping(IO &io, ModelDesc &m) {
    io.mapRequired("name", m.name);
    io.mapOptional("params", m.params, int64_t(0));
    io.mapOptional("layers", m.layers, int64_t(0));
    io.mapOptional("hidden", m.hidden, int64_t(0));
    io.mapOptional("heads", m.heads, int64_t(0));
    io.mapOptional("vocab", m.vocab, int64_t(0));
  }
  static std::string validate(IO &, ModelDesc &m) {
    if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || m.vocab <= 0)
      return "model '" + m.name +
             "': layers, hidden, heads and vocab must be positive";
    if (m.params < 0)
      return "model '" + m.name + "': 'params' must not be negative";
    return "";
  }
};

template <> struct llvm::yaml::MappingTraits<JobSpec> {
  static void mapping(IO &io, JobSpec &j) {
    if (auto *ctx = static_cast<ParseContext *>(io.getContext()))
      if (auto *in = static_cast<Input *>(&io); !io.outputting())
        if (const Node *n = in->getCurrentNode()) {
          const char *at = n->getSourceRange().Start.getPointer();
          size_t line = 1 + ctx->text.take_front(at - ctx->text.data())
                                .count('\n');
          j.where = (ctx->path + ":" + llvm::Twine(line)).str();
        }
    io.mapRequired("name", j.name);
    std::optional<ModelDesc> model;
    if (io.outputting() && j.onnx.empty())
      model = j.model;
    io.mapOptional("model", model);
    if (model)
      j.model = *model;
    io.mapOptional("onnx", j.onnx, std::string());
    io.mapOptional("options", j.optionsFile, std::string());
    io.mapOptional("data", j.data, std::string());
    io.mapRequired("global_batch", j.globalBatch);
    io.mapRequired("seq", j.seq);
    std::optional<int64_t> steps, tokens;
    if (io.outputting())
      steps = j.steps;
    io.mapOptional("steps", steps);
    io.mapOptional("tokens", tokens);
    if (!io.outputting()) {
      if (steps)
        j.steps = *steps;
      else if (tokens && j.globalBatch > 0 && j.seq > 0)
        j.steps = (*tokens + j.globalBatch * j.seq - 1) /
                  (j.globalBatch * j.seq);
      else
        j.steps = tokens ? 0 : -1;
    }
    io.mapOptional("arrival", j.arrival, 0.0);
    io.mapOptional("deadline", j.deadline);
    io.mapOptional("priority", j.priority, 0);
    io.mapOptional("user_gpus", j.userGpus, int64_t(1));
    io.mapOptional("user_gpu_type", j.userGpuType, std::string());
  }
  static std::string validate(IO &io, JobSpec &j) {
    if (io.outputting())
      return "";
    std::string who = "job '" + j.name + "': ";
    if (j.name.empty())
      return "job 'name' must not be empty";
    if (j.onnx.empty() == (j.model.layers == 0))
      return who + "give exactly one of 'model' (sizes) and 'onnx'";
    if (!j.onnx.empty() && j.optionsFile.empty())
      return who + "'onnx' needs 'options': a table from frenzy-opt " +
             j.onnx + " --cluster=C.yaml --job-options -o TABLE";
    if (j.globalBatch <= 0 || j.seq <= 0)
      return who + "'global_batch' and 'seq' must be positive";
    if (j.steps < 0)
      return who + "give 'steps' or 'tokens' (how much to train)";
    if (j.steps == 0)
      return who + "'steps'/'tokens' must be positive";
    if (j.arrival < 0)
      return who + "'arrival' must not be negative";
    if (j.userGpus <= 0)
      return who + "'user_gpus' must be positive";
    return "";
  }
};
LLVM_YAML_IS_SEQUENCE_VECTOR(JobSpec)

template <> struct llvm::yaml::MappingTraits<QueueFile> {
  static void mapping(IO &io, QueueFile &q) { io.mapRequired("jobs", q.jobs); }
  static std::string validate(IO &io, QueueFile &q) {
    if (io.outputting())
      return "";
    if (q.jobs.empty())
      return "'jobs' must list at least one job";
    llvm::StringSet<> seen;
    for (const JobSpec &j : q.jobs)
      if (!seen.insert(j.name).second)
        return "duplicate job name '" + j.name + "'";
    return "";
  }
};

llvm::Expected<std::vector<JobSpec>>
frenzy::sched::readJobQueue(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(), "%s: cannot read: %s",
                                   path.str().c_str(),
                                   buf.getError().message().c_str());
  std::string diag;
  auto handler = [](const llvm::SMDiagnostic &d, void *ctx) {
    if (!static_cast<std::string *>(ctx)->empty())
      return; // the first error is the one to fix
    llvm::raw_string_ostream os(*static_cast<std::string *>(ctx));
    os << d.getFilename() << ":" << d.getLineNo() << ":" << d.getColumnNo() + 1
       << ": " << d.getMessage();
  };
  ParseContext ctx{path, (*buf)->getBuffer()};
  QueueFile q;
  llvm::yaml::Input in((*buf)->getMemBufferRef(), &ctx, handler, &diag);
  in >> q;
  if (in.error())
    return llvm::createStringError(
        in.error(), "%s",
        diag.empty() ? (path + ": invalid job queue").str().c_str()
                     : diag.c_str());
  return std::move(q.jobs);
}

void frenzy::sched::writeJobQueue(const std::vector<JobSpec> &jobs,
                                  llvm::raw_ostream &os) {
  QueueFile q{jobs};
  llvm::yaml::Output out(os);
  out << q;
}
