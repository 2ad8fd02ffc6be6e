//===- TrainableParams.h - which weights train, which are buffers -*- C++ -*-===//
//
// Internal to the importer. ONNX keeps no record of which initializers were
// PyTorch parameters and which were registered buffers, so the importer
// decides from how the graph uses each one (never from its name):
//
//  1. No gradient path. A tensor that reaches no float output through
//     differentiable operands (it feeds only comparisons, shapes, indices,
//     Sin/Cos, a Where condition) cannot train.
//  2. Position table. A float tensor that is indexed (Slice or Gather on its
//     data operand, possibly reshaped, unsqueezed, cast, concatenated) and
//     whose every such row is only multiplied elementwise into activations,
//     never added, normalised or contracted: rotary cos/sin caches and
//     multiplicative masks. Learned tables are used the other way: position
//     embeddings are added, token embeddings are normalised or contracted,
//     norm gains are used whole.
//  3. The user's word: --frozen=PATTERN makes matching tensors buffers,
//     --trainable=PATTERN overrides rule 2 (not rule 1: a tensor no gradient
//     reaches cannot be trained).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_IMPORT_TRAINABLEPARAMS_H
#define FRENZY_LIB_IMPORT_TRAINABLEPARAMS_H

#include "OnnxModel.h"

#include "llvm/Support/GlobPattern.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace frenzy::import {

class TrainableParams {
public:
  /// Fails (in `error`) on a pattern that does not parse.
  TrainableParams(const onnx::GraphProto &g, const OnnxImportOptions &options,
                  std::optional<ImportError> &error);

  /// Why the float tensor `name` is a buffer, or nullopt when it trains.
  /// Sets `error` for a --trainable pattern naming a tensor no gradient
  /// reaches, or a tensor both flags name.
  std::optional<std::string> bufferReason(const std::string &name,
                                          std::optional<ImportError> &error);

  /// After every param is classified: a pattern that matched none of them
  /// is a typo, reported as an error.
  std::optional<ImportError> unusedPattern() const;

private:
  struct Pattern {
    std::string text;
    llvm::GlobPattern glob;
    bool used = false;
  };
  /// The first pattern of `list` that matches `name`, marked used.
  Pattern *match(std::vector<Pattern> &list, const std::string &name);
  /// Rule 1: why no gradient reaches `name`.
  std::string noGradientReason(const std::string &name) const;
  /// Rule 2: the indexing node of a position table, or nullopt.
  std::optional<std::string> positionTable(const std::string &name) const;

  const onnx::GraphProto &graph;
  std::unordered_set<std::string> live;          // carry a gradient
  std::unordered_set<std::string> dataDependent; // depend on input values
  /// Readers of each tensor: (node, operand index), in graph order.
  std::unordered_map<std::string,
                     std::vector<std::pair<const onnx::NodeProto *, int>>>
      readers;
  std::vector<Pattern> frozen, trainable;
};

} // namespace frenzy::import

#endif
