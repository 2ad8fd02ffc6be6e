//===- GraphEmitter.h - builds frenzy IR from a resolved ONNX graph -*- C++ -*-===//
#ifndef FRENZY_LIB_IMPORT_GRAPHEMITTER_H
#define FRENZY_LIB_IMPORT_GRAPHEMITTER_H

#include "OnnxModel.h"
#include "TrainableParams.h"
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace frenzy::import {

class GraphEmitter;

/// Converts one ONNX node; returns an error message or nullopt.
using NodeHandler = std::function<std::optional<ImportError>(
    GraphEmitter &, const onnx::NodeProto &)>;

/// A handler for one op type over a range of default-domain opset versions.
struct HandlerEntry {
  const char *opType;
  int64_t sinceOpset;
  int64_t untilOpset;
  NodeHandler handler;
};

/// Every op the importer converts (OnnxOpHandlers.cpp).
const std::vector<HandlerEntry> &nodeHandlers();

/// "node 'NAME' (op T, domain 'D', opset N)" for error messages.
std::string describeNode(const onnx::NodeProto &node, const LoadedModel &model);

/// Fails on the first node no handler converts, before any shape work.
std::optional<ImportError> checkSupported(const LoadedModel &model);

class GraphEmitter {
public:
  GraphEmitter(LoadedModel &model, ResolvedGraph &resolved,
               const OnnxImportOptions &options, mlir::MLIRContext *ctx);

  mlir::OwningOpRef<mlir::ModuleOp> emit(std::optional<ImportError> &error);

  // --- for handlers ---------------------------------------------------------
  mlir::OpBuilder &builder() { return b; }
  mlir::MLIRContext *context() { return ctx; }
  int64_t opset() const { return model.defaultOpset(); }
  mlir::Location loc(const onnx::NodeProto &node);
  /// The value of a tensor: an op result, a function argument, a parameter or
  /// a materialised constant. Sets `error` when the name is unknown.
  mlir::Value value(const std::string &name);
  /// The node's input i as a value; null when the input is absent.
  mlir::Value input(const onnx::NodeProto &node, int i);
  /// Host value of an input (folded shape data), or null.
  const ConstantTensor *constant(const onnx::NodeProto &node, int i);
  /// The static type inferred for a tensor.
  mlir::RankedTensorType type(const std::string &name);
  mlir::RankedTensorType outputType(const onnx::NodeProto &node, int i = 0) {
    return type(node.output(i));
  }
  void bind(const std::string &name, mlir::Value v) { values[name] = v; }
  /// The value an Identity node yields: its input (a plain alias), or a
  /// distinct param when it names a deduplicated parameter.
  mlir::Value aliasOrDistinctParam(const onnx::NodeProto &identity);
  std::optional<ImportError> pendingError() { return error; }

  template <typename OpTy, typename... Args>
  std::optional<ImportError> emitSimple(const onnx::NodeProto &node,
                                        Args &&...args) {
    if (error) // an operand could not be materialised
      return error;
    auto op = b.create<OpTy>(loc(node), outputType(node),
                             std::forward<Args>(args)...);
    bind(node.output(0), op->getResult(0));
    return error;
  }

private:
  /// A param called `name` whose bytes are those of initializer or
  /// Constant node `source` (the same name unless deduplicated).
  mlir::Value param(const std::string &name, const std::string &source);
  mlir::Value constantValue(const std::string &name, const ConstantTensor &c);
  std::optional<ImportError> emitNode(const onnx::NodeProto &node);
  /// The first verifier error of the ops after `before` (the whole body
  /// when null): those one node's handler built.
  std::optional<std::string> verifyNewOps(mlir::Operation *before);
  void setValueInsertionPoint();

  LoadedModel &model;
  ResolvedGraph &resolved;
  mlir::MLIRContext *ctx;
  mlir::OpBuilder b;
  mlir::Location fileLoc;
  std::unordered_map<std::string, mlir::Value> values;
  std::optional<TrainableParams> roles;
  std::unordered_map<std::string, const onnx::NodeProto *> constantNodes;
  mlir::Block *body = nullptr;
  mlir::Operation *lastValueOp = nullptr;
  std::optional<ImportError> error;
};

/// True for names that are parameter paths rather than generated names.
bool looksLikeParameterName(const std::string &name);

/// Maps an ONNX element type to an MLIR one; null if unsupported.
mlir::Type elementType(mlir::MLIRContext *ctx, int32_t onnxType);
/// A dense attribute for a host constant of the given tensor type.
mlir::DenseElementsAttr denseAttr(const ConstantTensor &c,
                                  mlir::RankedTensorType type);

} // namespace frenzy::import

#endif
