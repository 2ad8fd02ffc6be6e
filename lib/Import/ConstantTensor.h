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
  /// The values as integers (floats truncated and saturated), expanded if
  /// splat; nullopt for more than kMaxDenseFoldElements values (a splat can
  /// claim any shape: expanding it must not allocate what a file says).
  std::optional<std::vector<int64_t>> toInts() const;
  /// The first value (a scalar operand: Range's bounds, Trilu's k), or
  /// nullopt for an empty tensor.
  std::optional<double> firstValue() const;

  static ConstantTensor scalarInt(int64_t v, int32_t dtype);
  static ConstantTensor vectorInts(std::vector<int64_t> v);
};

/// Largest dense result the folder materialises; bigger results stay ops.
constexpr int64_t kMaxDenseFoldElements = 1 << 16;

bool isFloatType(int32_t onnxDtype);

/// A double as int64: truncated, NaN as 0, and saturated outside int64's
/// range (a plain cast is undefined behaviour there; the values come from
/// files).
int64_t saturatingInt(double v);
/// int64 arithmetic as two's complement, like the ONNX runtimes (signed
/// overflow is undefined behaviour in C++).
int64_t wrappingAdd(int64_t a, int64_t b);
int64_t wrappingSub(int64_t a, int64_t b);
int64_t wrappingMul(int64_t a, int64_t b);
/// a * b, or INT64_MAX when it overflows (sizes and strides).
int64_t saturatingMul(int64_t a, int64_t b);

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
