//===- SideTaskSpec.cpp - side tasks from their command-line specs --------===//
#include "SideTaskSpec.h"

#include "tasks/ImageResize.h"
#include "tasks/PageRank.h"
#include "tasks/ProcessTask.h"
#include "tasks/TrainModel.h"

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <tuple>

namespace frenzy::rt {
namespace {

/// Throws at its N-th step: how a test makes a real task fail mid-run.
class FailAfter : public SideTask {
public:
  FailAfter(std::unique_ptr<SideTask> t, int64_t n) : inner(std::move(t)), n(n) {}
  std::string name() const override { return inner->name(); }
  void init(int64_t b) override { inner->init(b); }
  bool step() override {
    if (++count >= n)
      throw std::runtime_error("fail-after=" + std::to_string(n) +
                               ": the failure asked for at its step " +
                               std::to_string(count));
    return inner->step();
  }
  void pause() override { inner->pause(); }
  void resume() override { inner->resume(); }
  void finish() override { inner->finish(); }
  int64_t bytesInUse() const override { return inner->bytesInUse(); }
  std::string progress() const override { return inner->progress(); }

private:
  std::unique_ptr<SideTask> inner;
  int64_t n, count = 0;
};

struct Keys {
  std::string spec;
  std::map<std::string, std::string> kv;

  [[noreturn]] void bad(const std::string &key, const std::string &what) const {
    throw std::invalid_argument("--side-task '" + spec + "': " +
                                (key.empty() ? "" : "'" + key + "': ") + what);
  }
  bool has(const std::string &k) const { return kv.count(k) != 0; }
  std::string take(const std::string &k, const std::string &dflt = "") {
    auto it = kv.find(k);
    if (it == kv.end())
      return dflt;
    std::string v = it->second;
    kv.erase(it);
    return v;
  }
  int64_t integer(const std::string &k, int64_t dflt, int64_t min) {
    if (!has(k))
      return dflt;
    std::string v = take(k);
    char *end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || x < min)
      bad(k, "'" + v + "' is not an integer >= " + std::to_string(min));
    return x;
  }
  double number(const std::string &k, double dflt) {
    if (!has(k))
      return dflt;
    std::string v = take(k);
    char *end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(x > 0))
      bad(k, "'" + v + "' is not a positive number");
    return x;
  }
  std::pair<int64_t, int64_t> size(const std::string &k,
                                   std::pair<int64_t, int64_t> dflt) {
    if (!has(k))
      return dflt;
    std::string v = take(k);
    size_t x = v.find('x');
    char *e1 = nullptr, *e2 = nullptr;
    long long h = x == std::string::npos ? 0 : std::strtoll(v.c_str(), &e1, 10);
    long long w = x == std::string::npos ? 0
                                         : std::strtoll(v.c_str() + x + 1, &e2, 10);
    if (h < 1 || w < 1 || e1 != v.c_str() + x || *e2)
      bad(k, "'" + v + "' is not HEIGHTxWIDTH (e.g. 120x160)");
    return {h, w};
  }
  void done() const {
    if (!kv.empty())
      bad(kv.begin()->first, "unknown key for this kind");
  }
};

} // namespace

SideTaskBinding parseSideTaskArg(const std::string &arg) {
  size_t eq = arg.find('='), colon = arg.find(':');
  // NAME=KIND...: the '=' comes before any ':' (keys use '=' after it).
  if (eq != std::string::npos && (colon == std::string::npos || eq < colon))
    return {arg.substr(0, eq), arg.substr(eq + 1)};
  return {arg.substr(0, colon), arg};
}

SideTaskState makeSideTask(const std::string &spec) {
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  Keys k{spec, {}};
  SideTaskState st;
  if (kind == "process") {
    // The whole rest is the command; options cannot follow it.
    if (rest.empty())
      k.bad("", "a process needs a command: process:COMMAND");
    st.task = std::make_unique<ProcessTask>(rest);
    return st;
  }
  size_t at = 0;
  while (at < rest.size()) {
    size_t comma = rest.find(',', at);
    std::string item = rest.substr(at, comma == std::string::npos
                                           ? std::string::npos
                                           : comma - at);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      k.bad(item, "write key=value (options separated by commas)");
    k.kv[item.substr(0, eq)] = item.substr(eq + 1);
    at = comma == std::string::npos ? rest.size() : comma + 1;
  }
  st.priority = k.integer("priority", 0, -1000000);
  st.budget = k.integer("memory", 0, 0);
  int64_t failAfter = k.integer("fail-after", 0, 1);
  if (kind == "pagerank") {
    PageRankTask::Config c;
    c.nodes = k.integer("nodes", c.nodes, 1);
    c.degree = k.integer("degree", c.degree, 0);
    c.rowsPerStep = k.integer("rows", c.rowsPerStep, 1);
    c.tolerance = k.number("tol", c.tolerance);
    c.maxIterations = k.integer("iters", c.maxIterations, 1);
    c.seed = uint64_t(k.integer("seed", int64_t(c.seed), 0));
    k.done();
    st.task = std::make_unique<PageRankTask>(c);
  } else if (kind == "resize") {
    ImageResizeTask::Config c;
    c.images = k.integer("images", c.images, 1);
    std::tie(c.height, c.width) = k.size("size", {c.height, c.width});
    std::tie(c.outHeight, c.outWidth) = k.size("to", {c.outHeight, c.outWidth});
    c.rowsPerStep = k.integer("rows", c.rowsPerStep, 1);
    c.seed = uint64_t(k.integer("seed", int64_t(c.seed), 0));
    k.done();
    st.task = std::make_unique<ImageResizeTask>(c);
  } else if (kind == "train") {
    TrainModelTask::Config c;
    c.plan = k.take("plan");
    c.data = k.take("data");
    if (c.plan.empty() || c.data.empty())
      k.bad("plan", "train needs plan=PLAN.bin,data=TOKENS.bin");
    c.steps = k.integer("steps", 0, 0);
    c.seed = uint64_t(k.integer("seed", int64_t(c.seed), 0));
    c.initSeed = uint64_t(k.integer("init", 0, 0));
    c.instrs = k.integer("instrs", c.instrs, 1);
    k.done();
    st.task = std::make_unique<TrainModelTask>(c);
  } else {
    k.bad("", "unknown kind '" + kind +
                  "'; use pagerank, resize, train or process");
  }
  if (failAfter > 0)
    st.task = std::make_unique<FailAfter>(std::move(st.task), failAfter);
  return st;
}

} // namespace frenzy::rt
