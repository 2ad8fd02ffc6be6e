//===- FrenzyDialect.cpp - dialect registration and attributes ------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace frenzy;

#include "frenzy/Dialect/Frenzy/IR/FrenzyOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "frenzy/Dialect/Frenzy/IR/FrenzyAttrs.cpp.inc"

void FrenzyDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "frenzy/Dialect/Frenzy/IR/FrenzyAttrs.cpp.inc"
      >();
}

// #frenzy.block<embed> | #frenzy.block<head> | #frenzy.block<N>
Attribute BlockAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  int64_t index;
  StringRef keyword;
  OptionalParseResult intResult = parser.parseOptionalInteger(index);
  if (intResult.has_value()) {
    if (failed(*intResult))
      return {};
    if (index < 0) {
      parser.emitError(parser.getCurrentLocation(),
                       "block index must be >= 0; use 'embed' or 'head' for "
                       "the parts before and after the layers");
      return {};
    }
  } else if (succeeded(parser.parseOptionalKeyword(&keyword))) {
    if (keyword == "embed") {
      index = kEmbed;
    } else if (keyword == "head") {
      index = kHead;
    } else {
      parser.emitError(parser.getCurrentLocation(),
                       "expected 'embed', 'head' or a layer index");
      return {};
    }
  } else {
    parser.emitError(parser.getCurrentLocation(),
                     "expected 'embed', 'head' or a layer index");
    return {};
  }
  if (parser.parseGreater())
    return {};
  return BlockAttr::get(parser.getContext(), index);
}

void BlockAttr::print(AsmPrinter &printer) const {
  printer << '<';
  if (isEmbed())
    printer << "embed";
  else if (isHead())
    printer << "head";
  else
    printer << getIndex();
  printer << '>';
}

int64_t frenzy::elementBytes(Type elementType) {
  if (auto intTy = dyn_cast<IntegerType>(elementType))
    return std::max<int64_t>(1, (intTy.getWidth() + 7) / 8);
  if (auto floatTy = dyn_cast<FloatType>(elementType))
    return (floatTy.getWidth() + 7) / 8;
  if (isa<IndexType>(elementType))
    return 8;
  return 0;
}

int64_t frenzy::tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements() * elementBytes(tensor.getElementType());
}
