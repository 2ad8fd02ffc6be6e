//===- ServeArgs.cpp - arguments of serve and the client commands ---------===//
//
// The service's subcommands parse their own few flags: the simulator's
// global LLVM options stay untouched, and each subcommand refuses flags it
// does not know (a typo must not be silently ignored by a daemon).
//
//===----------------------------------------------------------------------===//
#include "ServeArgs.h"

#include "frenzy/Service/LocalHttp.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace frenzy;
using namespace frenzy::sched;

bool frenzy::sched::parseSubArgs(llvm::ArrayRef<const char *> args,
                                 llvm::ArrayRef<const char *> known,
                                 SubArgs &out, std::string &err) {
  for (llvm::StringRef a : args) {
    if (!a.starts_with("--")) {
      out.positional.push_back(a.str());
      continue;
    }
    auto [name, value] = a.drop_front(2).split('=');
    if (llvm::find(known, name) == known.end()) {
      err = "unknown option '" + a.str() + "'; valid: ";
      for (const char *k : known)
        err += std::string("--") + k + " ";
      return false;
    }
    if (!out.flags.emplace(name.str(), value.str()).second) {
      err = "--" + name.str() + " given twice";
      return false;
    }
  }
  return true;
}

bool frenzy::sched::intFlag(const SubArgs &a, const char *name, int64_t def,
                            int64_t &out, std::string &err) {
  auto it = a.flags.find(name);
  out = def;
  if (it == a.flags.end())
    return true;
  if (llvm::StringRef(it->second).getAsInteger(10, out) || out < 0) {
    err = std::string("--") + name + " needs a non-negative integer, not '" +
          it->second + "'";
    return false;
  }
  return true;
}

/// --http, --http-allow-remote, --http-timeout, --status-window.
static bool parseHttpArgs(SubArgs &a, ServeOptions &o, std::string &err) {
  int64_t timeoutMs, window;
  if (!intFlag(a, "http-timeout", 2000, timeoutMs, err) ||
      !intFlag(a, "status-window", 3 * 3600, window, err))
    return false;
  if (timeoutMs == 0 || window == 0) {
    err = "--http-timeout and --status-window must be positive";
    return false;
  }
  if (a.flags.count("http") && a.flags["http"].empty()) {
    err = "--http needs HOST:PORT, e.g. --http=127.0.0.1:0 (0: any free "
          "port, written to STATE/http.port)";
    return false;
  }
  auto remote = a.flags.find("http-allow-remote");
  if (remote != a.flags.end() && !remote->second.empty()) {
    err = "--http-allow-remote takes no value";
    return false;
  }
  o.http = a.flags["http"];
  if (!o.http.empty()) // checked here too: a bad address stops nothing
    if (auto at = service::parseHttpEndpoint(o.http, remote != a.flags.end());
        !at) {
      err = llvm::toString(at.takeError());
      return false;
    }
  o.httpAllowRemote = remote != a.flags.end();
  o.httpTimeoutMs = int(timeoutMs);
  o.statusWindowS = double(window);
  return true;
}

bool frenzy::sched::parseServeArgs(llvm::ArrayRef<const char *> args,
                                   const char *argv0, ServeOptions &o,
                                   std::string &err) {
  SubArgs a;
  if (!parseSubArgs(args,
                    {"state-dir", "cluster", "socket", "socket-mode",
                     "frenzy-opt", "frenzy-launch", "policy", "max-restarts",
                     "restart-cost",
                     "checkpoint-every", "db-timeout", "plan-timeout", "http",
                     "http-allow-remote", "http-timeout", "status-window",
                     "backend", "slurm-timeout"},
                    a, err))
    return false;
  if (!a.positional.empty()) {
    err = "serve takes no positional argument ('" + a.positional[0] + "')";
    return false;
  }
  o.stateDir = a.flags["state-dir"];
  o.clusterFile = a.flags["cluster"];
  if (o.stateDir.empty() || o.clusterFile.empty()) {
    err = "serve needs --state-dir=DIR and --cluster=C.yaml";
    return false;
  }
  llvm::SmallString<256> abs(o.stateDir);
  llvm::sys::fs::make_absolute(abs);
  o.stateDir = abs.str().str();
  o.socket = a.flags.count("socket") ? a.flags["socket"]
                                     : o.stateDir + "/serve.sock";
  if (a.flags.count("socket-mode")) {
    unsigned mode;
    if (llvm::StringRef(a.flags["socket-mode"]).getAsInteger(8, mode) ||
        mode > 0777) {
      err = "--socket-mode needs an octal mode such as 0660, not '" +
            a.flags["socket-mode"] + "'";
      return false;
    }
    o.socketMode = mode;
  }
  // frenzy-opt and frenzy-launch default to the ones beside this binary.
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&parseServeArgs));
  llvm::StringRef bin = llvm::sys::path::parent_path(self);
  o.frenzyOpt = a.flags.count("frenzy-opt") ? a.flags["frenzy-opt"]
                                            : (bin + "/frenzy-opt").str();
  o.frenzyLaunch = a.flags.count("frenzy-launch")
                       ? a.flags["frenzy-launch"]
                       : (bin + "/frenzy-launch").str();
  for (const std::string *tool : {&o.frenzyOpt, &o.frenzyLaunch})
    if (!llvm::sys::fs::can_execute(*tool)) {
      err = *tool + ": not an executable (give --frenzy-opt and "
                    "--frenzy-launch)";
      return false;
    }
  if (a.flags.count("policy"))
    o.policy = a.flags["policy"];
  if (o.policy != "frenzy" && o.policy != "frenzy-static" &&
      o.policy != "fifo") {
    err = "--policy must be frenzy (resizes running jobs through checkpoint, "
          "re-plan and resume), frenzy-static or fifo (never move a running "
          "job), not '" + o.policy + "'";
    return false;
  }
  if (a.flags.count("restart-cost")) {
    const std::string &v = a.flags["restart-cost"];
    if (llvm::StringRef(v).getAsDouble(o.restartCost) || o.restartCost < 0 ||
        !std::isfinite(o.restartCost)) {
      err = "--restart-cost needs seconds >= 0, not '" + v + "'";
      return false;
    }
  }
  if (a.flags.count("backend"))
    o.backend = a.flags["backend"];
  if (o.backend != "local" && o.backend != "slurm") {
    err = "--backend must be local (processes on this machine) or slurm "
          "(sbatch), not '" + o.backend + "'";
    return false;
  }
  int64_t restarts, every, dbMs, planS, slurmS;
  if (!intFlag(a, "max-restarts", 2, restarts, err) ||
      !intFlag(a, "checkpoint-every", 1, every, err) ||
      !intFlag(a, "db-timeout", 5000, dbMs, err) ||
      !intFlag(a, "plan-timeout", 300, planS, err) ||
      !intFlag(a, "slurm-timeout", 10, slurmS, err))
    return false;
  if (every == 0 || planS == 0 || slurmS == 0) {
    err = "--checkpoint-every, --plan-timeout and --slurm-timeout must be "
          "positive";
    return false;
  }
  o.slurmTimeoutS = int(slurmS);
  o.maxRestarts = int(restarts);
  o.checkpointEvery = int(every);
  o.dbTimeoutMs = int(dbMs);
  o.planTimeoutS = int(planS);
  return parseHttpArgs(a, o, err);
}
