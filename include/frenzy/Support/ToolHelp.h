//===- ToolHelp.h - --help that lists only Frenzy's options ------*- C++ -*-===//
//
// LLVM's shared library registers hundreds of command-line options (AMDGPU,
// AArch64, debugify, ...) in every tool that links it, and mlir-opt's
// driver adds its own: `frenzy-opt --help` printed 496 lines, almost none
// about Frenzy. Tools call hideForeignOptions() before parsing: every
// option outside the tool's own categories is marked hidden, so --help
// shows the tool's options and --help-hidden still shows everything.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SUPPORT_TOOLHELP_H
#define FRENZY_SUPPORT_TOOLHELP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <algorithm>

namespace frenzy {

/// Hides every registered option whose categories are not among `keep`
/// and whose name is not in `alsoKeep`. --help, --help-hidden and
/// --version stay visible.
inline void
hideForeignOptions(llvm::ArrayRef<const llvm::cl::OptionCategory *> keep,
                   llvm::ArrayRef<llvm::StringRef> alsoKeep = {}) {
  static const llvm::StringRef generic[] = {"help", "help-hidden", "version"};
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *o = entry.getValue();
    llvm::StringRef name = entry.getKey();
    auto named = [&](llvm::ArrayRef<llvm::StringRef> names) {
      return std::find(names.begin(), names.end(), name) != names.end();
    };
    bool ours = std::any_of(
        o->Categories.begin(), o->Categories.end(),
        [&](llvm::cl::OptionCategory *c) {
          return std::find(keep.begin(), keep.end(), c) != keep.end();
        });
    if (!ours && !named(alsoKeep) && !named(generic))
      o->setHiddenFlag(llvm::cl::Hidden);
  }
}

} // namespace frenzy

#endif
