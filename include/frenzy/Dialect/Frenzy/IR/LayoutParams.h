//===- LayoutParams.h - parameter types of the layout attributes -*- C++ -*-===//
//
// The C++ values the layout and schedule attributes (FrenzyLayoutAttrs.td)
// hold, and the parsers/printers their parameters share: doubles that
// round-trip bit-exactly through text (the plan is written from them),
// `true`/`false`, bracketed integer lists and lists of nested attributes
// printed without their `#frenzy.x` prefix.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_DIALECT_FRENZY_IR_LAYOUTPARAMS_H
#define FRENZY_DIALECT_FRENZY_IR_LAYOUTPARAMS_H

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"

namespace frenzy {

/// One compute action of a stage: micro-batch `microBatch`'s forward (`F3`)
/// or backward (`B3`).
struct ScheduleAction {
  bool backward = false;
  int64_t microBatch = 0;
  bool operator==(const ScheduleAction &o) const {
    return backward == o.backward && microBatch == o.microBatch;
  }
};
inline llvm::hash_code hash_value(const ScheduleAction &a) {
  return llvm::hash_combine(a.backward, a.microBatch);
}

/// A double held by an attribute: compared and hashed by its bits, so
/// uniquing never merges 0.0 with -0.0 (nor loses a NaN), and the plan
/// written from it is the one the solver computed.
struct F64 {
  double value = 0;
  F64() = default;
  F64(double v) : value(v) {}
  operator double() const { return value; }
};
inline bool sameBits(F64 a, F64 b) {
  return llvm::bit_cast<uint64_t>(a.value) == llvm::bit_cast<uint64_t>(b.value);
}
inline llvm::hash_code hash_value(F64 v) {
  return llvm::hash_value(llvm::bit_cast<uint64_t>(v.value));
}

namespace attrparams {

mlir::FailureOr<F64> parseF64(mlir::AsmParser &parser);
void printF64(mlir::AsmPrinter &printer, F64 value);

mlir::FailureOr<bool> parseBool(mlir::AsmParser &parser);
void printBool(mlir::AsmPrinter &printer, bool value);

/// `[1, 2, 3]`, `[]`.
mlir::FailureOr<llvm::SmallVector<int64_t>> parseI64List(mlir::AsmParser &parser);
void printI64List(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);

/// `[<...>, <...>]`: attributes of one kind, each without its prefix (the
/// prefixed form `#frenzy.stage<...>` is accepted too).
template <typename A>
mlir::FailureOr<llvm::SmallVector<A>> parseAttrList(mlir::AsmParser &parser) {
  llvm::SmallVector<A> out;
  if (parser.parseCommaSeparatedList(
          mlir::AsmParser::Delimiter::Square, [&]() -> mlir::ParseResult {
            A a;
            if (parser.parseCustomAttributeWithFallback(a))
              return mlir::failure();
            out.push_back(a);
            return mlir::success();
          }))
    return mlir::failure();
  return out;
}
template <typename A>
void printAttrList(mlir::AsmPrinter &printer, llvm::ArrayRef<A> list) {
  printer << '[';
  llvm::interleaveComma(list, printer,
                        [&](A a) { printer.printStrippedAttrOrType(a); });
  printer << ']';
}

/// A nested attribute without its prefix.
template <typename A> mlir::FailureOr<A> parseNested(mlir::AsmParser &parser) {
  A a;
  if (parser.parseCustomAttributeWithFallback(a))
    return mlir::failure();
  return a;
}

} // namespace attrparams
} // namespace frenzy

#endif
