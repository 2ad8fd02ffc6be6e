//===- FrenzyAttrs.td - frenzy dialect attributes ---------*- tablegen -*-===//
#ifndef FRENZY_ATTRS_TD
#define FRENZY_ATTRS_TD

include "frenzy/Dialect/Frenzy/IR/FrenzyBase.td"

// Position of an op in the model's layer structure. Partitioning cuts the
// model between blocks, so the order embed < 0 < 1 < ... < head matters.
def Frenzy_BlockAttr : Frenzy_Attr<"Block", "block"> {
  let summary = "model block an op belongs to: embed, a layer index, or head";
  let parameters = (ins "int64_t":$index);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kEmbed = -1;
    static constexpr int64_t kHead = INT64_MAX;
    bool isEmbed() const { return getIndex() == kEmbed; }
    bool isHead() const { return getIndex() == kHead; }
    bool isLayer() const { return !isEmbed() && !isHead(); }
  }];
}

include "frenzy/Dialect/Frenzy/IR/FrenzyLayoutAttrs.td"

#endif // FRENZY_ATTRS_TD
