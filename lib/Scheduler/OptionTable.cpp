//===- OptionTable.cpp - the option table file and the per-model cache ----===//
//
// The table is the hand-off between the compiler (frenzy-opt writes it from
// the memory model and the partitioner) and the MLIR-free scheduler. One
// option a line:
//   option gpus=A100-80G:8/2,T4:4/1 tp=2 pp=1 dp=4 step_s=0.25 peak_bytes=N layout=TEXT
// gpus lists TYPE:COUNT/GROUP (GROUP GPUs of a TP group share a node);
// layout runs to the end of the line. '#' lines are comments.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Options.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace frenzy;
using namespace frenzy::sched;

int64_t JobOption::totalGpus() const {
  int64_t n = 0;
  for (const TypeCount &t : gpus)
    n += t.count;
  return n;
}

int64_t JobOption::countOf(int type) const {
  for (const TypeCount &t : gpus)
    if (t.type == type)
      return t.count;
  return 0;
}

std::string JobSpec::modelKey() const {
  if (!optionsFile.empty())
    return "table:" + optionsFile;
  return llvm::formatv("{0}|{1}|{2}|{3}|{4}|{5}|b{6}|s{7}", model.name,
                       model.totalParams(), model.layers, model.hidden,
                       model.heads, model.vocab, globalBatch, seq);
}

void frenzy::sched::writeOptionTable(const std::vector<JobOption> &options,
                                     const SchedCluster &c,
                                     llvm::StringRef header,
                                     llvm::raw_ostream &os) {
  os << "# frenzy job options v1";
  if (!header.empty())
    os << ": " << header;
  os << "\n";
  for (const JobOption &o : options) {
    os << "option gpus=";
    for (size_t i = 0; i < o.gpus.size(); ++i)
      os << (i ? "," : "") << c.types()[o.gpus[i].type].gpu.name << ":"
         << o.gpus[i].count << "/" << o.gpus[i].group;
    os << llvm::formatv(" tp={0} pp={1} dp={2} step_s={3:e} peak_bytes={4} "
                        "layout={5}\n",
                        o.tp, o.pp, o.dp, o.stepSeconds, o.peakBytes,
                        o.layout);
  }
}

llvm::Expected<std::vector<JobOption>>
frenzy::sched::readOptionTable(llvm::StringRef path, const SchedCluster &c) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(),
                                   "%s: cannot read option table: %s",
                                   path.str().c_str(),
                                   buf.getError().message().c_str());
  return parseOptionTable((*buf)->getBuffer(), path, c);
}

llvm::Expected<std::vector<JobOption>>
frenzy::sched::parseOptionTable(llvm::StringRef text, llvm::StringRef path,
                                const SchedCluster &c) {
  std::vector<JobOption> out;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    llvm::StringRef line = lines[ln].trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    auto fail = [&](const llvm::Twine &what) {
      return llvm::createStringError(
          std::errc::invalid_argument, "%s:%zu: %s", path.str().c_str(),
          ln + 1, what.str().c_str());
    };
    if (!line.consume_front("option "))
      return fail("expected a line 'option gpus=... step_s=...'; "
                  "regenerate it with frenzy-opt --job-options");
    JobOption o;
    bool haveStep = false;
    while (!line.empty()) {
      auto [field, rest] = line.split(' ');
      auto [key, value] = field.split('=');
      if (key == "layout") {
        o.layout = line.drop_front(7).str();
        break;
      }
      line = rest.ltrim();
      bool bad = false;
      if (key == "gpus") {
        llvm::SmallVector<llvm::StringRef> parts;
        value.split(parts, ',');
        for (llvm::StringRef part : parts) {
          auto [type, counts] = part.split(':');
          auto [count, group] = counts.split('/');
          TypeCount tc;
          tc.type = c.typeIndex(type);
          if (tc.type < 0)
            return fail("field 'gpus': GPU type '" + type +
                        "' is not in the cluster; the table was made for "
                        "another cluster file");
          if (count.getAsInteger(10, tc.count) || tc.count <= 0 ||
              (!group.empty() &&
               (group.getAsInteger(10, tc.group) || tc.group <= 0)))
            return fail("field 'gpus': expected TYPE:COUNT/GROUP with "
                        "positive integers, got '" + part + "'");
          o.gpus.push_back(tc);
        }
      } else if (key == "tp") {
        bad = value.getAsInteger(10, o.tp);
      } else if (key == "pp") {
        bad = value.getAsInteger(10, o.pp);
      } else if (key == "dp") {
        bad = value.getAsInteger(10, o.dp);
      } else if (key == "peak_bytes") {
        bad = value.getAsInteger(10, o.peakBytes);
      } else if (key == "step_s") {
        bad = value.getAsDouble(o.stepSeconds) || !(o.stepSeconds > 0);
        haveStep = true;
      } else {
        return fail("unknown field '" + key + "'");
      }
      if (bad)
        return fail("field '" + key + "': bad value '" + value + "'");
    }
    if (o.gpus.empty() || !haveStep)
      return fail("an option needs 'gpus' and 'step_s'");
    llvm::sort(o.gpus, [](const TypeCount &a, const TypeCount &b) {
      return a.type < b.type;
    });
    out.push_back(std::move(o));
  }
  return out;
}

llvm::Expected<const std::vector<JobOption> *>
OptionCache::get(const JobSpec &job) {
  std::string key = job.modelKey();
  auto it = tables.find(key);
  if (it == tables.end()) {
    std::vector<JobOption> options;
    if (!job.optionsFile.empty()) {
      auto table = readOptionTable(job.optionsFile, cluster);
      if (!table)
        return table.takeError();
      options = std::move(*table);
    } else {
      options = analyticOptions(job.model, job.globalBatch, job.seq, cluster,
                                params);
    }
    it = tables.emplace(key, std::move(options)).first;
  }
  if (it->second.empty()) {
    // Say how far off it is: training state alone is 16 bytes a parameter.
    double largest = 0;
    int64_t gpus = 0;
    for (const SchedType &t : cluster.types()) {
      largest = std::max(largest, double(t.gpu.memoryBytes));
      gpus = std::max(gpus, t.total);
    }
    return llvm::createStringError(
        std::errc::invalid_argument,
        "%s: job '%s' fits on no GPU type of the cluster: no layout of up "
        "to %lld GPUs of one type (largest %.0f GiB) or two types holds "
        "its training state (%.1f GiB for %lld parameters) and activations "
        "at global batch %lld, seq %lld; use a smaller model or batch, or "
        "a larger cluster",
        job.where.c_str(), job.name.c_str(), (long long)gpus,
        largest / double(1ll << 30),
        16.0 * double(job.model.totalParams()) / double(1ll << 30),
        (long long)job.model.totalParams(), (long long)job.globalBatch,
        (long long)job.seq);
  }
  return &it->second;
}
