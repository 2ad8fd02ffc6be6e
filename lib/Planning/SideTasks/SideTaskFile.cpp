//===- SideTaskFile.cpp - reads side-task descriptions (YAML) -------------===//
//
// The file format is in docs/sidetasks.md. The reader walks the YAML node
// tree itself (not YAML I/O's mapping traits) so that every error can name
// the line of the offending value and the field, in one line: a side-task
// file is written by hand, and "invalid value" without a place is useless.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/SideTasks.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <cmath>
#include <set>

using namespace frenzy::sidetasks;
using llvm::StringRef;
namespace yaml = llvm::yaml;

llvm::StringRef frenzy::sidetasks::kindName(SideTask::Kind k) {
  return k == SideTask::Process ? "process" : "step";
}

namespace {

constexpr const char *kFields =
    "name, kind, flops, bytes, seconds, memory, steps, priority";

class Reader {
public:
  Reader(StringRef text, StringRef file) : text(text), file(file.str()) {
    // The YAML parser reports syntax errors here; keep the first.
    sm.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *self) {
          auto *r = static_cast<Reader *>(self);
          if (r->error.empty())
            r->error = llvm::formatv("{0}:{1}:{2}: YAML syntax error: {3}; "
                                     "fix the file's syntax",
                                     r->file, d.getLineNo(),
                                     d.getColumnNo() + 1, d.getMessage())
                           .str();
        },
        this);
  }

  llvm::Expected<std::vector<SideTask>> read() {
    yaml::Stream stream(text, sm);
    std::vector<SideTask> out;
    auto it = stream.begin();
    yaml::Node *root = it != stream.end() ? it->getRoot() : nullptr;
    auto *top = llvm::dyn_cast_or_null<yaml::MappingNode>(root);
    if (error.empty() && !top)
      fail(root, "side_tasks",
           "the file must be a mapping with a 'side_tasks:' list");
    // The YAML parser streams: a node must be read while its parent's
    // iterator stands on it, so the list is walked inside the loop.
    bool listed = false;
    std::set<std::string> names;
    if (top && error.empty())
      for (yaml::KeyValueNode &kv : *top) {
        std::string key = scalar(kv.getKey());
        if (!error.empty())
          break;
        if (key != "side_tasks") {
          fail(kv.getKey(), key,
               "unknown top-level field; the file holds "
               "one 'side_tasks:' list");
          break;
        }
        listed = true;
        auto *list = llvm::dyn_cast_or_null<yaml::SequenceNode>(kv.getValue());
        if (!list) {
          fail(kv.getValue(), "side_tasks",
               "must be a list of tasks ('- name: ...')");
          break;
        }
        for (yaml::Node &n : *list) {
          SideTask t = task(&n);
          if (!error.empty())
            break;
          if (!names.insert(t.name).second) {
            fail(&n, "name",
                 "'" + t.name +
                     "' is used twice; give each "
                     "task its own name");
            break;
          }
          out.push_back(std::move(t));
        }
        if (!error.empty())
          break;
      }
    if (error.empty() && top && !listed)
      fail(top, "side_tasks", "missing; list the tasks under 'side_tasks:'");
    // A syntax error may surface only after the walk reached it.
    for (; error.empty() && it != stream.end(); ++it)
      ;
    if (!error.empty())
      return llvm::createStringError(error);
    if (out.empty())
      return llvm::createStringError(
          file + ":1: field 'side_tasks': the list is empty; describe at "
                 "least one task");
    return out;
  }

private:
  int lineOf(yaml::Node *n) {
    if (!n)
      return 1;
    return int(sm.getLineAndColumn(n->getSourceRange().Start).first);
  }

  void fail(yaml::Node *n, StringRef field, StringRef what) {
    if (error.empty())
      error = llvm::formatv("{0}:{1}: field '{2}': {3}", file, lineOf(n), field,
                            what)
                  .str();
  }

  std::string scalar(yaml::Node *n, StringRef field = "") {
    auto *s = llvm::dyn_cast_or_null<yaml::ScalarNode>(n);
    if (!s) {
      fail(n, field.empty() ? "?" : field,
           "must be a plain value, not a list or mapping");
      return "";
    }
    llvm::SmallString<64> storage;
    return s->getValue(storage).str();
  }

  double number(yaml::Node *n, StringRef field) {
    std::string text = scalar(n, field);
    double v = 0;
    if (error.empty() &&
        (StringRef(text).trim().getAsDouble(v) || !std::isfinite(v) || v < 0))
      fail(n, field, "'" + text + "' is not a number >= 0");
    return v;
  }

  int64_t integer(yaml::Node *n, StringRef field, bool positive) {
    std::string text = scalar(n, field);
    long long v = 0;
    if (error.empty() &&
        (StringRef(text).trim().getAsInteger(10, v) || (positive && v <= 0)))
      fail(n, field,
           "'" + text + "' is not " +
               (positive ? "a positive integer" : "an integer"));
    return v;
  }

  /// Bytes: an integer, or a number with B, KB, MB, GB, KiB, MiB or GiB.
  int64_t bytes(yaml::Node *n, StringRef field) {
    std::string text = scalar(n, field);
    StringRef t = StringRef(text).trim();
    size_t split = t.find_first_not_of("0123456789.eE+-");
    StringRef num = t.substr(0, split),
              unit = t.substr(std::min(split, t.size())).trim();
    double scale = llvm::StringSwitch<double>(unit)
                       .Cases("", "B", 1)
                       .Case("KB", 1e3)
                       .Case("MB", 1e6)
                       .Case("GB", 1e9)
                       .Case("KiB", 1024.0)
                       .Case("MiB", 1024.0 * 1024)
                       .Case("GiB", 1024.0 * 1024 * 1024)
                       .Default(-1);
    double v = 0;
    if (error.empty() && (scale < 0 || num.getAsDouble(v) ||
                          !std::isfinite(v) || v < 0 || v * scale > 1e18))
      fail(n, field,
           "'" + text +
               "' is not a size (bytes, or a number with B, KB, "
               "MB, GB, KiB, MiB or GiB)");
    return int64_t(v * scale);
  }

  SideTask task(yaml::Node *n) {
    SideTask t;
    t.line = lineOf(n);
    auto *m = llvm::dyn_cast<yaml::MappingNode>(n);
    if (!m) {
      fail(n, "side_tasks", "each entry must be a mapping ('- name: ...')");
      return t;
    }
    bool named = false, hasSteps = false;
    for (yaml::KeyValueNode &kv : *m) {
      std::string key = scalar(kv.getKey());
      yaml::Node *v = kv.getValue();
      if (!error.empty())
        return t;
      if (key == "name") {
        t.name = scalar(v, key);
        named = !t.name.empty();
        if (!named && error.empty())
          fail(v, key, "is empty");
      } else if (key == "kind") {
        std::string k = scalar(v, key);
        if (k == "step")
          t.kind = SideTask::StepFunction;
        else if (k == "process")
          t.kind = SideTask::Process;
        else if (error.empty())
          fail(v, key,
               "'" + k +
                   "' is not 'step' (an iterative step "
                   "function) or 'process' (preemptible)");
      } else if (key == "flops") {
        t.flops = number(v, key);
      } else if (key == "bytes") {
        t.bytes = number(v, key);
      } else if (key == "seconds") {
        auto *per = llvm::dyn_cast_or_null<yaml::MappingNode>(v);
        if (!per) {
          fail(v, key,
               "must map GPU types to measured seconds per step "
               "(e.g. {cpu: 0.01, A100-80G: 0.001})");
          return t;
        }
        for (yaml::KeyValueNode &g : *per) {
          std::string type = scalar(g.getKey(), key);
          double s = number(g.getValue(), "seconds." + type);
          if (error.empty() && s <= 0)
            fail(g.getValue(), "seconds." + type, "must be positive");
          t.secondsOn[type] = s;
        }
      } else if (key == "memory") {
        t.memoryBytes = bytes(v, key);
      } else if (key == "steps") {
        hasSteps = true;
        if (scalar(v, key) == "unbounded")
          t.steps = -1;
        else
          t.steps = integer(v, key, true);
      } else if (key == "priority") {
        t.priority = integer(v, key, false);
      } else if (error.empty()) {
        fail(kv.getKey(), key,
             std::string("unknown; valid fields: ") + kFields);
      }
      if (!error.empty())
        return t;
    }
    if (!named)
      fail(n, "name", "missing; every side task needs a name");
    else if (t.flops == 0 && t.bytes == 0 && t.secondsOn.empty())
      fail(n, "flops",
           "task '" + t.name +
               "' has no cost: give flops and/or bytes per "
               "step, or seconds per step per GPU type");
    else if (!hasSteps)
      fail(n, "steps",
           "missing in task '" + t.name + "': give a number or 'unbounded'");
    return t;
  }

  StringRef text;
  llvm::SourceMgr sm;
  std::string file, error;
};

} // namespace

llvm::Expected<std::vector<SideTask>>
frenzy::sidetasks::parseSideTasks(StringRef text, StringRef fileName) {
  return Reader(text, fileName).read();
}

llvm::Expected<std::vector<SideTask>>
frenzy::sidetasks::readSideTaskFile(StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(
        std::errc::invalid_argument, "%s: cannot read the side-task file: %s",
        path.str().c_str(), buf.getError().message().c_str());
  if ((*buf)->getBufferSize() > (16 << 20))
    return llvm::createStringError(
        std::errc::invalid_argument,
        "%s: the side-task file is over 16 MiB; describe fewer tasks",
        path.str().c_str());
  return parseSideTasks((*buf)->getBuffer(), path);
}
