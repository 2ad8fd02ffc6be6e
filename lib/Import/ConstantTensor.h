//===- ConstantTensor.h - small host tensors for shape folding --*- C++ -*-===//
//
// The importer folds the shape-computing side of an export (Shape, Gather,
// Concat, Range, ...) on the host. Those values are tiny integer tensors, plus
// scalar float literals and splat fills (masks, ConstantOfShape). A splat is
// kept as one value, so a [T, T] fill costs O(1) memory.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LIB_IMPORT_CONSTANTTENSOR_H
#define FRENZY_LIB_IMPORT_CONSTANTTENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
class TensorProto;
} // namespace onnx

namespace frenzy::import {

struct ConstantTensor {
  int32_t dtype = 0; // onnx::TensorProto_DataType
  std::vector<int64_t> shape;
  bool splat = false;
  // Exactly one of these holds the values (one entry when splat).
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool isFloat() const;
  int64_t numElements() const;
  /// True when the vector for the type holds one value (splat) or one per
  /// element.
  bool holdsAllValues() const;
  int64_t intAt(int64_t i) const { return ints[splat ? 0 : i]; }
  double floatAt(int64_t i) const { return floats[splat ? 0 : i]; }
  double valueAt(int64_t i) const {
    return isFloat() ? floatAt(i) : double(intAt(i));
  }
  /// The values as integers (floats truncated), expanded if splat.
  std::vector<int64_t> toInts() const;

  static ConstantTensor scalarInt(int64_t v, int32_t dtype);
  static ConstantTensor vectorInts(std::vector<int64_t> v);
};

/// Largest dense result the folder materialises; bigger results stay ops.
constexpr int64_t kMaxDenseFoldElements = 1 << 16;

bool isFloatType(int32_t onnxDtype);

/// Reads an inline TensorProto (raw_data or typed fields). Returns nullopt
/// for external data or element types the folder does not handle.
std::optional<ConstantTensor> readTensorProto(const onnx::TensorProto &t);

/// Writes a dense constant as a TensorProto (for ONNX shape inference).
void writeTensorProto(const ConstantTensor &c, const std::string &name,
                      onnx::TensorProto &out);

/// Evaluates `node` on constant inputs (nullptr for absent optional inputs).
/// Returns nullopt when the op is not foldable here or a result would be too
/// large; the node then stays an op. `error` is set for inputs that are
/// definitely wrong (out-of-range index, incompatible shapes).
std::optional<std::vector<ConstantTensor>>
evaluateNode(const onnx::NodeProto &node,
             const std::vector<const ConstantTensor *> &inputs,
             std::string &error);

} // namespace frenzy::import

#endif
