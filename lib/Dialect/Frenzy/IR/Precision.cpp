//===- Precision.cpp - the module's precision policy ----------------------===//
#include "frenzy/Dialect/Frenzy/IR/Precision.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace frenzy;

std::optional<Precision> frenzy::parsePrecision(StringRef name) {
  if (name == "fp32")
    return Precision::FP32;
  if (name == "bf16-mixed")
    return Precision::BF16Mixed;
  if (name == "fp16-mixed")
    return Precision::FP16Mixed;
  return std::nullopt;
}

StringRef frenzy::precisionName(Precision p) {
  switch (p) {
  case Precision::FP32:
    return "fp32";
  case Precision::BF16Mixed:
    return "bf16-mixed";
  case Precision::FP16Mixed:
    return "fp16-mixed";
  }
  return "fp32";
}

StringRef frenzy::validPrecisionNames() { return "fp32, bf16-mixed, fp16-mixed"; }

PrecisionBytes frenzy::precisionBytes(Precision p) {
  if (p == Precision::FP32)
    return {4, 4, 4, 0, 4};
  return {2, 2, 2, 4, 4};
}

Type frenzy::computeType(MLIRContext *ctx, Precision p) {
  switch (p) {
  case Precision::FP32:
    return Float32Type::get(ctx);
  case Precision::BF16Mixed:
    return BFloat16Type::get(ctx);
  case Precision::FP16Mixed:
    return Float16Type::get(ctx);
  }
  return Float32Type::get(ctx);
}

Precision frenzy::getPrecision(ModuleOp module) {
  if (auto s = module->getAttrOfType<StringAttr>("frenzy.precision"))
    if (auto p = parsePrecision(s.getValue()))
      return *p;
  return Precision::FP32;
}
