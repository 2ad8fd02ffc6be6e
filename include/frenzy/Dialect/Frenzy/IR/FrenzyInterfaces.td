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

#endif // FRENZY_INTERFACES_TD
