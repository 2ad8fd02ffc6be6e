//===- BlockNames.h - layer indices from exporter node names ----*- C++ -*-===//
#ifndef FRENZY_DIALECT_FRENZY_TRANSFORMS_BLOCKNAMES_H
#define FRENZY_DIALECT_FRENZY_TRANSFORMS_BLOCKNAMES_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace frenzy {

/// What an ONNX node or parameter name says about the layer it belongs to.
struct NameScope {
  /// The layer index: the first numeric path component that follows a named
  /// one ("/h.3/attn/MatMul", "model.layers.3.mlp.up_proj.weight",
  /// "/encoder/layers.3/...").
  std::optional<int64_t> layer;
  /// True when the name carries a module path (so a missing index means
  /// "outside the layers"), false for bare names ("/Add", "Constant_33").
  bool hasModulePath = false;
};

NameScope parseNameScope(llvm::StringRef name);

} // namespace frenzy

#endif
