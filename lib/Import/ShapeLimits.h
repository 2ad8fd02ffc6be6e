//===- ShapeLimits.h - sizes a model may have, and why a dim does not fit -===//
//
// Internal to the importer. Every tensor size read from a file or bound on
// the command line is checked before anything multiplies it, so no shape
// computation here or in the ONNX library can overflow. When a bound dim
// (--seq, --dim) is larger than a table the model holds (a position
// embedding, a causal-mask buffer, a rotary cache), the failure it causes
// is traced back to that table and reported in words.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_IMPORT_SHAPELIMITS_H
#define FRENZY_LIB_IMPORT_SHAPELIMITS_H

#include "OnnxModel.h"

namespace frenzy::import {

/// The most elements one tensor may have: 2^44 (64 TiB of fp32), far beyond
/// any model, and small enough that byte counts and sums over a model's
/// tensors stay inside int64.
constexpr int64_t kMaxTensorElements = int64_t(1) << 44;

/// The product of `dims`, or nullopt if a dim is negative or the product
/// passes kMaxTensorElements (checked before each multiplication).
template <typename Range>
std::optional<int64_t> checkedElements(const Range &dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > kMaxTensorElements / d))
      return std::nullopt;
    n *= d;
  }
  return n;
}

/// Initializers, Constant node tensors and graph inputs (after binding):
/// each dim non-negative, each size within the limit, inline data as long as
/// its dims say.
std::optional<ImportError> checkDeclaredSizes(const onnx::GraphProto &g);

/// Every inferred type within the limit, in graph order.
std::optional<ImportError> checkInferredSizes(const onnx::GraphProto &g,
                                              const ResolvedGraph &r);

/// Gather nodes whose indices are known on the host read only rows the
/// table has; a row past the end that a bound dim asked for is reported as
/// that dim being beyond the model's limit.
std::optional<ImportError> checkGatherRanges(const onnx::GraphProto &g,
                                             const ResolvedGraph &r);

/// One line for a failure of ONNX shape inference (`what`, the library's
/// message, which lists every node that failed): a bound dim beyond a table
/// of the model when that is the cause, else the first failure and how many
/// more there were.
std::string explainInferenceFailure(const std::string &what,
                                    const onnx::GraphProto &g,
                                    const ResolvedGraph &r);

} // namespace frenzy::import

#endif
