//===- Precision.h - the module's precision policy --------------*- C++ -*-===//
//
// One policy decides the element type and bytes of every tensor class of a
// training step. The mixed policies keep fp32 master weights and fp32 Adam
// moments next to 16-bit working weights, gradients and activations, which
// gives the 16 bytes per parameter (2 + 2 + 4 + 4 + 4) of mixed-precision
// Adam that ZeRO (arXiv 1910.02054, section 3.1) counts.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_IR_PRECISION_H
#define FRENZY_DIALECT_FRENZY_IR_PRECISION_H

#include "mlir/IR/BuiltinOps.h"
#include <optional>

namespace frenzy {

enum class Precision { FP32, BF16Mixed, FP16Mixed };

/// "fp32", "bf16-mixed", "fp16-mixed".
std::optional<Precision> parsePrecision(llvm::StringRef name);
llvm::StringRef precisionName(Precision p);
/// For error messages: "fp32, bf16-mixed, fp16-mixed".
llvm::StringRef validPrecisionNames();

/// Bytes per element of each tensor class under a policy.
struct PrecisionBytes {
  int64_t activation;  // forward values and their gradients
  int64_t weight;      // the working copy the kernels read
  int64_t gradient;    // parameter gradients
  int64_t master;      // fp32 master copy (0 when the weight is fp32)
  int64_t moment;      // each optimizer moment (Adam has two, SGD one)
};
PrecisionBytes precisionBytes(Precision p);

/// The element type kernels compute in: f32, bf16 or f16.
mlir::Type computeType(mlir::MLIRContext *ctx, Precision p);

/// The module's policy (`frenzy.precision`), fp32 when unset.
Precision getPrecision(mlir::ModuleOp module);

} // namespace frenzy

#endif
