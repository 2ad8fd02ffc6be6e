//===- ServeArgs.h - arguments of serve and the client commands -*- C++ -*-===//
#ifndef FRENZY_TOOLS_FRENZY_SCHED_SERVEARGS_H
#define FRENZY_TOOLS_FRENZY_SCHED_SERVEARGS_H

#include "Service.h"

namespace frenzy::sched {

/// `--name=value` arguments and positionals of one subcommand: each flag
/// must be one of `known`; a repeated or unknown one is an error.
struct SubArgs {
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;
};
bool parseSubArgs(llvm::ArrayRef<const char *> args,
                  llvm::ArrayRef<const char *> known, SubArgs &out,
                  std::string &err);
/// A non-negative integer flag (default when absent).
bool intFlag(const SubArgs &a, const char *name, int64_t def, int64_t &out,
             std::string &err);

bool parseServeArgs(llvm::ArrayRef<const char *> args, const char *argv0,
                    ServeOptions &o, std::string &err);

/// `frenzy-sched submit|status|cancel|logs ARGS`. Returns the exit code.
int clientMain(llvm::StringRef command, llvm::ArrayRef<const char *> args);

} // namespace frenzy::sched

#endif
