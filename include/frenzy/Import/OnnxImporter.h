//===- OnnxImporter.h - ONNX to frenzy dialect ------------------*- C++ -*-===//
#ifndef FRENZY_IMPORT_ONNXIMPORTER_H
#define FRENZY_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace frenzy {

struct OnnxImportOptions {
  /// Bind symbolic dim 0 of every graph input.
  std::optional<int64_t> batch;
  /// Bind symbolic dim 1 of every graph input.
  std::optional<int64_t> seq;
  /// Bind symbolic dims by name (--dim=NAME=VALUE); wins over batch/seq.
  llvm::StringMap<int64_t> dims;
  /// Glob patterns of weights to keep fixed (--frozen) or to train although
  /// the graph reads them as a position table (--trainable).
  std::vector<std::string> frozen, trainable;
};

/// The attribute of a non-trainable frenzy.param that says why it is a
/// buffer (how the graph uses it, or --frozen).
constexpr llvm::StringLiteral kBufferReasonAttr = "frenzy.buffer";

/// Imports a binary `.onnx` or text `.onnxtext` model into a module holding
/// one `func.func @forward` with static shapes everywhere. Weight bytes are
/// never read. On failure emits one error (at a location naming the file)
/// and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, const OnnxImportOptions &options,
               mlir::MLIRContext *context);

/// `text` with control characters written as \xHH: names in a model file
/// may hold any bytes, and an error naming them must stay one line.
std::string oneLine(llvm::StringRef text);

/// True when `path` names an ONNX model by its extension.
bool isOnnxPath(llvm::StringRef path);

} // namespace frenzy

#endif
