//===- ImportFlags.h - frenzy-opt flags that shape an ONNX import -*- C++ -*-===//
//
// --dim=NAME=VALUE, --frozen=PATTERN[,...] and --trainable=PATTERN[,...],
// kept out of the driver (frenzy-opt.cpp) so it stays one concern.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_FRENZY_OPT_IMPORTFLAGS_H
#define FRENZY_TOOLS_FRENZY_OPT_IMPORTFLAGS_H

#include "frenzy/Import/OnnxImporter.h"

namespace frenzy::opt {

/// Adds the flags to `options`; prints one error line and returns false
/// for a malformed --dim.
bool addImportFlags(OnnxImportOptions &options);

} // namespace frenzy::opt

#endif
