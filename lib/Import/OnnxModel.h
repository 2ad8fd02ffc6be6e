//===- OnnxModel.h - loading and shape resolution of ONNX graphs -*- C++ -*-===//
//
// Internal to the importer. The steps are: load and validate the file, bind
// symbolic dims, then alternate ONNX shape inference with host folding of
// shape-computing nodes until every tensor type is static.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_IMPORT_ONNXMODEL_H
#define FRENZY_LIB_IMPORT_ONNXMODEL_H

#include "ConstantTensor.h"
#include "frenzy/Import/OnnxImporter.h"

#include "onnx/onnx_pb.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace frenzy::import {

/// An importer failure: one line for the user, no location prefix.
struct ImportError {
  std::string message;
  /// About the whole model or the command line, not the node being
  /// converted when it was found (a --frozen pattern): no node prefix.
  bool wholeModel = false;
};

struct LoadedModel {
  onnx::ModelProto model;
  std::string path;
  std::string directory; // where external data paths are relative to
  std::unordered_map<std::string, int64_t> opsets; // domain -> version
  int64_t defaultOpset() const;
};

/// Reads a binary or text ONNX model and validates its envelope.
std::optional<ImportError> loadModel(const std::string &path, LoadedModel &out);

/// A symbolic input dim bound from the command line, as the user wrote it:
/// errors about a value too large for the model name the flag to change.
struct DimBinding {
  std::string flag; // "--seq", "--batch" or "--dim=NAME"
  int64_t value;
};

struct ResolvedGraph {
  /// Bound dims, one per flag and value.
  std::vector<DimBinding> bindings;
  /// Values known on the host: folded shape chains, literals, splat fills.
  std::unordered_map<std::string, ConstantTensor> constants;
  /// Static type of every tensor that is not a known constant.
  std::unordered_map<std::string, onnx::TypeProto> types;
  /// Initializers by name (pointers into the model).
  std::unordered_map<std::string, const onnx::TensorProto *> initializers;
};

/// Binds symbolic dims and folds until all shapes are static.
std::optional<ImportError> resolveShapes(LoadedModel &m,
                                         const OnnxImportOptions &options,
                                         ResolvedGraph &out);

} // namespace frenzy::import

#endif
