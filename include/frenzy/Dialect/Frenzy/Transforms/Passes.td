//===- Passes.td - frenzy dialect passes ------------------*- tablegen -*-===//
#ifndef FRENZY_TRANSFORMS_PASSES_TD
#define FRENZY_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FrenzyFusePatterns : Pass<"frenzy-fuse", "mlir::ModuleOp"> {
  let summary = "Recognise decomposed GELU, LayerNorm, RMSNorm, SiLU/SwiGLU "
                "and attention and replace them with fused ops";
  let description = [{
    Exporters decompose these into chains of elementwise ops; cost and memory
    analyses must see them as single ops, since a fused kernel neither spends
    the decomposed form's bandwidth nor keeps its intermediates alive.
  }];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

def FrenzyAnnotateBlocks : Pass<"frenzy-annotate-blocks", "mlir::ModuleOp"> {
  let summary = "Annotate every op with the model block it belongs to";
  let description = [{
    Sets `frenzy.block` (#frenzy.block<embed>, <N> or <head>) on every op of
    the model function, and `frenzy.num_blocks` on the module. Layer indices
    come from ONNX node-name scopes (/h.3/..., /layers.3/...,
    /encoder/layers.3/...) or parameter names; when names say nothing, from
    the structure: the longest run of repeated, isomorphic parameterised
    subgraphs.
  }];
  let options = [
    Option<"structuralOnly", "structural-only", "bool", "false",
           "Ignore names and use only the structural fallback">,
  ];
  let dependentDialects = ["::frenzy::FrenzyDialect"];
}

#endif // FRENZY_TRANSFORMS_PASSES_TD
