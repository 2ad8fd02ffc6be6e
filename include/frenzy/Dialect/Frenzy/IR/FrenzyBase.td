//===- FrenzyBase.td - the frenzy dialect definition ------*- tablegen -*-===//
#ifndef FRENZY_BASE_TD
#define FRENZY_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Frenzy_Dialect : Dialect {
  let name = "frenzy";
  let summary = "Tensor-level IR for planning transformer training";
  let description = [{
    The frenzy dialect holds a transformer model as imported from ONNX: every
    tensor has a static shape, parameters are symbolic references to bytes
    that live elsewhere (never copied into the IR), and every op carries the
    model block it belongs to. Analyses (memory, cost) and transforms
    (autodiff, partitioning, scheduling) work on this form.
  }];
  let cppNamespace = "::frenzy";
  let useDefaultAttributePrinterParser = 1;
  // The layout attributes checked against each other (LayoutVerifier.cpp).
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Name of the discardable attribute holding an op's model block.
    static constexpr ::llvm::StringLiteral kBlockAttrName = "frenzy.block";
    /// The partition decision (LayoutAttr) and schedule (ScheduleAttr) on
    /// the module, and each block op's placement (PlacementAttr).
    static constexpr ::llvm::StringLiteral kLayoutAttrName = "frenzy.layout";
    static constexpr ::llvm::StringLiteral kScheduleAttrName =
        "frenzy.schedule";
    static constexpr ::llvm::StringLiteral kPlacementAttrName =
        "frenzy.placement";
  }];
}

class Frenzy_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Frenzy_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // FRENZY_BASE_TD
