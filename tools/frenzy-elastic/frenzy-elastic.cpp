//===- frenzy-elastic.cpp - train on the devices that are there -----------===//
//
// frenzy-elastic --cluster=C.yaml MODEL.onnx --data=TOKENS.bin --steps=S
//     --checkpoint-dir=DIR --checkpoint-every=N [frenzy-opt options]
// (also reached as `frenzy-launch --elastic ...`). Plans with frenzy-opt,
// runs the ranks with frenzy-launch, and re-plans when devices leave or
// join (Supervisor.h, docs/elastic.md). Links no MLIR: frenzy-opt runs as
// a process.
//
//===----------------------------------------------------------------------===//
#include "Processes.h"
#include "Supervisor.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <unistd.h>

using namespace frenzy::elastic;

namespace {

const char *kUsage =
    "usage: frenzy-elastic --cluster=C.yaml MODEL.onnx --data=TOKENS.bin "
    "--steps=S --checkpoint-dir=DIR --checkpoint-every=N [--run-dir=DIR] "
    "[--seed=N] [--threads=N] [--log-every=N] [--init=onnx|seed] "
    "[--plan-timeout=SEC] [--stall-timeout=SEC] [--max-restarts=N] "
    "[--frenzy-opt=PATH] [--frenzy-launch=PATH] [--launch-agent=CMD] "
    "[--launch-timeout=SEC] [--comm-timeout=SEC] [frenzy-opt options...]\n"
    "Trains on the devices C.yaml lists, re-planning when a rank dies or "
    "the file changes (a node added joins at the next checkpoint); SIGHUP "
    "or SIGUSR1 reads the file again. Other options go to frenzy-opt (e.g. "
    "--global-batch=8 --seq=64).\n";

} // namespace

ElasticOptions frenzy::elastic::parseElasticArgs(int argc, char **argv) {
  ElasticOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag, std::string &into) {
      size_t n = std::strlen(flag);
      if (a.compare(0, n, flag) != 0)
        return false;
      into = a.substr(n);
      if (into.empty())
        throw ElasticError(std::string(flag) + " needs a value");
      return true;
    };
    auto number = [&](const char *flag, auto &into, double min) {
      std::string s;
      if (!value(flag, s))
        return false;
      char *end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      // Counts are whole; NaN, inf and 1e30 would not survive the cast.
      bool whole = std::is_integral_v<std::decay_t<decltype(into)>>;
      if (*end || !(v >= min && v <= 1e9) || (whole && v != std::floor(v)))
        throw ElasticError(std::string(flag) + " needs a " +
                           (whole ? "whole number" : "number") + " from " +
                           std::to_string(int(min)) + " to 1e9, got '" + s +
                           "'");
      into = decltype(+into)(v);
      return true;
    };
    std::string s;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (value("--cluster=", o.cluster) || value("--data=", o.data) ||
               value("--checkpoint-dir=", o.checkpointDir) ||
               value("--run-dir=", o.runDir) ||
               value("--frenzy-opt=", o.frenzyOpt) ||
               value("--frenzy-launch=", o.frenzyLaunch) ||
               number("--steps=", o.steps, 1) ||
               number("--checkpoint-every=", o.checkpointEvery, 1) ||
               number("--plan-timeout=", o.planTimeout, 1) ||
               number("--stall-timeout=", o.stallTimeout, 1) ||
               number("--max-restarts=", o.maxRestarts, 0)) {
    } else if (value("--launch-agent=", s)) {
      o.launchOptions.push_back(a);
    } else if (number("--launch-timeout=", o.launchTimeout, 1)) {
      o.launchOptions.push_back(a);
    } else if (value("--seed=", s) || value("--threads=", s) ||
               value("--log-every=", s) || value("--init=", s) ||
               value("--comm-timeout=", s)) {
      o.launchOptions.push_back(a); // frenzy-launch checks the values
    } else if (a == "-o" || a.rfind("-o=", 0) == 0 ||
               a.rfind("--emit", 0) == 0) {
      throw ElasticError("'" + a +
                         "': frenzy-elastic writes the plans itself "
                         "(into --run-dir)");
    } else if (a.size() > 1 && a[0] == '-') {
      o.planOptions.push_back(a);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      throw ElasticError("more than one model given ('" + o.model + "', '" + a +
                         "')");
    }
  }
  auto need = [](bool ok, const char *what) {
    if (!ok)
      throw ElasticError(std::string(what) +
                         " (frenzy-elastic --help lists the options)");
  };
  need(!o.model.empty(), "no model given");
  need(!o.cluster.empty(), "--cluster=C.yaml is required");
  need(!o.data.empty(), "--data=TOKENS.bin is required");
  need(o.steps > 0, "--steps=S is required");
  need(!o.checkpointDir.empty(), "--checkpoint-dir=DIR is required (the run "
                                 "resumes from it after a change)");
  need(o.checkpointEvery > 0, "--checkpoint-every=N is required");
  while (o.checkpointDir.size() > 1 && o.checkpointDir.back() == '/')
    o.checkpointDir.pop_back();
  if (o.runDir.empty())
    o.runDir = o.checkpointDir + "-elastic";
  if (o.frenzyOpt.empty())
    o.frenzyOpt = besideSelf("frenzy-opt");
  if (o.frenzyLaunch.empty())
    o.frenzyLaunch = besideSelf("frenzy-launch");
  // Found missing now, not after a plan or in the middle of a re-plan.
  for (auto [path, flag] : {std::pair{&o.frenzyOpt, "--frenzy-opt"},
                            std::pair{&o.frenzyLaunch, "--frenzy-launch"}})
    if (!findProgram(*path))
      throw ElasticError(*path + ": no such program (not beside "
                                 "frenzy-elastic nor on PATH); give " +
                         std::string(flag) + "=PATH");
  return o;
}

int main(int argc, char **argv) {
  try {
    return supervise(parseElasticArgs(argc, argv));
  } catch (const ElasticError &e) {
    std::fprintf(stderr, "frenzy-elastic: error: %s\n", e.what());
    return 1;
  }
}
