//===- OnnxImporter.cpp - entry point: file to frenzy module --------------===//
#include "frenzy/Import/OnnxImporter.h"

#include "GraphEmitter.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace frenzy {

std::string oneLine(llvm::StringRef text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c != 0x7f) {
      out += char(c);
      continue;
    }
    static const char hex[] = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

bool isOnnxPath(llvm::StringRef path) {
  return path.ends_with(".onnx") || path.ends_with(".onnxtext") ||
         path.ends_with(".onnxtxt");
}

OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path,
                                     const OnnxImportOptions &options,
                                     MLIRContext *context) {
  context->loadDialect<FrenzyDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  auto report = [&](const import::ImportError &e) {
    emitError(fileLoc) << oneLine(e.message);
    return nullptr;
  };
  // The ONNX library throws; nothing escapes this function.
  try {
    import::LoadedModel model;
    if (auto e = import::loadModel(path.str(), model))
      return report(*e);
    if (auto e = import::checkSupported(model))
      return report(*e);
    import::ResolvedGraph resolved;
    if (auto e = import::resolveShapes(model, options, resolved))
      return report(*e);
    import::GraphEmitter emitter(model, resolved, options, context);
    std::optional<import::ImportError> error;
    OwningOpRef<ModuleOp> module = emitter.emit(error);
    if (error || !module)
      return report(error ? *error : import::ImportError{"import failed"});
    if (options.batch)
      (*module)->setAttr("frenzy.batch",
                         IntegerAttr::get(IntegerType::get(context, 64),
                                          *options.batch));
    if (options.seq)
      (*module)->setAttr("frenzy.seq",
                         IntegerAttr::get(IntegerType::get(context, 64),
                                          *options.seq));
    return module;
  } catch (const std::exception &e) {
    return report({std::string("ONNX library error: ") + e.what()});
  }
}

} // namespace frenzy
