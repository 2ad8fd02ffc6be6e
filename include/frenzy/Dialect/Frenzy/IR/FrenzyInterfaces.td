//===- FrenzyInterfaces.td - op interfaces for analyses ---*- tablegen -*-===//
#ifndef FRENZY_INTERFACES_TD
#define FRENZY_INTERFACES_TD

include "mlir/IR/OpBase.td"

// Cost facts of one op execution. The defaults count every operand and result
// byte once and one flop per result element; compute-heavy ops override
// getFlops. Later passes (memory, time) build on these numbers.
def Frenzy_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::frenzy";
  let methods = [
    InterfaceMethod<"Floating-point operations of one execution.",
      "int64_t", "getFlops", (ins), [{}], [{
        return ::frenzy::detail::defaultFlops($_op);
      }]>,
    InterfaceMethod<"Bytes read from operands.",
      "int64_t", "getBytesRead", (ins), [{}], [{
        return ::frenzy::detail::operandBytes($_op);
      }]>,
    InterfaceMethod<"Bytes written to results.",
      "int64_t", "getBytesWritten", (ins), [{}], [{
        return ::frenzy::detail::resultBytes($_op);
      }]>,
  ];
}

// Reverse-mode derivative of one op. The autodiff pass walks the forward
// graph backwards and asks each op on the path from a parameter to the loss
// for the gradients of its operands given the gradients of its results; the
// rule emits ordinary frenzy ops at the builder's insertion point, so the
// backward graph is visible to every later analysis (memory, cost, liveness).
def Frenzy_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::frenzy";
  let methods = [
    InterfaceMethod<[{
        Emits the gradient of every floating-point operand. `resultGrads`
        holds one value per result (zeros where a result has no gradient).
        `operandGrads` is resized to the operand count; entries left null
        carry no gradient (integer, boolean or shape operands). Fails with a
        diagnostic on an attribute combination the rule does not cover.
      }],
      "::mlir::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // FRENZY_INTERFACES_TD
