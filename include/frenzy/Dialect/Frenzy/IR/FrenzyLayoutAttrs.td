//===- FrenzyLayoutAttrs.td - layout and schedule attributes -*- tablegen -*-===//
//
// The partition decision as typed attributes: a device mesh with named axes,
// the layout (the mesh plus every pipeline's stage placements, layer ranges
// and batch shares), the per-op placement, and the pipeline schedule. The
// frenzy-partition pass writes `frenzy.layout`, frenzy-pipeline-schedule
// writes `frenzy.schedule`; every later stage reads them through these
// classes' accessors. Each attribute's verifier checks what it alone can
// see; FrenzyDialect::verifyOperationAttribute checks them against each
// other (LayoutVerifier.cpp). docs/partitioner.md shows the printed form.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_LAYOUT_ATTRS_TD
#define FRENZY_LAYOUT_ATTRS_TD

include "frenzy/Dialect/Frenzy/IR/FrenzyBase.td"

//===-- Parameters -------------------------------------------------------===//

// A double that prints so it reads back bit-exactly.
class Frenzy_F64Param<string dflt = ""> : AttrParameter<"::frenzy::F64", ""> {
  let comparator = "::frenzy::sameBits($_lhs, $_rhs)";
  let parser = [{ ::frenzy::attrparams::parseF64($_parser) }];
  let printer = [{ ::frenzy::attrparams::printF64($_printer, $_self) }];
  let defaultValue = dflt;
}
class Frenzy_BoolParam<string dflt = ""> : AttrParameter<"bool", ""> {
  let parser = [{ ::frenzy::attrparams::parseBool($_parser) }];
  let printer = [{ ::frenzy::attrparams::printBool($_printer, $_self) }];
  let defaultValue = dflt;
}
def Frenzy_I64ListParam : ArrayRefParameter<"int64_t"> {
  let parser = [{ ::frenzy::attrparams::parseI64List($_parser) }];
  let printer = [{ ::frenzy::attrparams::printI64List($_printer, $_self) }];
}
class Frenzy_AttrListParam<string attr, string dflt = ""> : ArrayRefParameter<attr> {
  let parser = "::frenzy::attrparams::parseAttrList<" # attr # ">($_parser)";
  let printer = "::frenzy::attrparams::printAttrList<" # attr # ">($_printer, $_self)";
  let defaultValue = dflt;
  let comparator = "::llvm::ArrayRef<" # attr # ">($_lhs) == ::llvm::ArrayRef<" # attr # ">($_rhs)";
}
class Frenzy_NestedParam<string attr> : AttrParameter<attr, ""> {
  let parser = "::frenzy::attrparams::parseNested<" # attr # ">($_parser)";
  let printer = [{ $_printer.printStrippedAttrOrType($_self) }];
}

//===-- The mesh ---------------------------------------------------------===//

def Frenzy_MeshAttr : Frenzy_Attr<"Mesh", "mesh"> {
  let summary = "a device mesh: named axes and their sizes";
  let description = [{
    `#frenzy.mesh<dp = 2, pp = 2, tp = 2>`: the logical grid the devices
    of a layout are placed on. Axis names are pp (pipeline stages), dp
    (data-parallel replicas: the pipelines), tp (tensor parallelism) and sp,
    cp, ep (sequence, context, expert parallelism; no pass places along
    them yet). Each is named once and has size >= 1. A layout whose
    pipelines differ in depth or TP degree (Frenzy's uneven plans) uses the
    mesh as their bounding grid and leaves the slots it does not fill empty.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::StringAttr">:$axes,
                        ArrayRefParameter<"int64_t">:$sizes);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Checked by the layout that holds it (LayoutAttr's verifier), so a
    /// bad mesh is one error at the layout, not one per nesting level.
    static ::llvm::LogicalResult
    check(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
          ::llvm::ArrayRef<::mlir::StringAttr> axes,
          ::llvm::ArrayRef<int64_t> sizes);
    /// The size of `axis`; nullopt when the mesh has no such axis.
    std::optional<int64_t> sizeOf(::llvm::StringRef axis) const;
    /// The product of the sizes: the slots of the grid.
    int64_t slots() const;
    /// The axis names a mesh may use.
    static bool isKnownAxis(::llvm::StringRef axis);
  }];
}

//===-- The layout -------------------------------------------------------===//

def Frenzy_StageAttr : Frenzy_Attr<"Stage", "stage"> {
  let summary = "one pipeline stage's placement, layer range and costs";
  let description = [{
    The devices of one node that run layers `layers = [first, last]` (plus
    the embedding and/or the head) of one pipeline; its coordinate on the
    mesh's pp axis is its index in the pipeline, its extent on tp the number
    of devices. The predicted seconds (forward + backward of one
    micro-batch), per-rank peak bytes and the parts the bubble analysis
    plays apart are the planner's.
  }];
  let parameters = (ins
    "int64_t":$node,
    Frenzy_I64ListParam:$devices,
    Frenzy_I64ListParam:$layers,
    Frenzy_BoolParam<"false">:$embed,
    Frenzy_BoolParam<"false">:$head,
    StringRefParameter<"the node's GPU type, for readers", "\"\"">:$gpu,
    Frenzy_F64Param<>:$seconds,
    Frenzy_F64Param<"0.0">:$forward_seconds,
    Frenzy_F64Param<"0.0">:$transfer_seconds,
    "int64_t":$peak_bytes,
    DefaultValuedParameter<"int64_t", "0">:$activation_bytes,
    Frenzy_BoolParam<"false">:$full_recompute);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// Checked by the layout that holds it (see MeshAttr::check).
    ::llvm::LogicalResult
    check(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
    int64_t getFirstLayer() const { return getLayers()[0]; }
    int64_t getLastLayer() const { return getLayers()[1]; }
    /// The stage's extent on the mesh's tp axis.
    int64_t getTp() const { return int64_t(getDevices().size()); }
  }];
}

def Frenzy_PipelineAttr : Frenzy_Attr<"Pipeline", "pipeline"> {
  let summary = "one pipeline (a data-parallel replica): its stages and batch share";
  let description = [{
    Its coordinate on the mesh's dp axis is its index in the layout; it runs
    `micro_batches` micro-batches per step, `sequences` sequences in all
    (micro_batches x the layout's micro_batch), at the pace of its slowest
    stage (`stage_seconds`).
  }];
  let parameters = (ins
    "int64_t":$micro_batches,
    "int64_t":$sequences,
    Frenzy_F64Param<>:$stage_seconds,
    Frenzy_AttrListParam<"::frenzy::StageAttr">:$stages);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Frenzy_IdleAttr : Frenzy_Attr<"Idle", "idle"> {
  let summary = "devices a layout leaves unused, and why";
  let parameters = (ins "int64_t":$node, Frenzy_I64ListParam:$devices,
                        StringRefParameter<"why">:$why);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Frenzy_LayoutAttr : Frenzy_Attr<"Layout", "layout"> {
  let summary = "the partition decision: mesh, stage placements, batch split";
  let description = [{
    What frenzy-partition decided, on the module as `frenzy.layout`: the
    mesh (dp = pipelines, pp = the deepest pipeline's stages, tp = the
    widest stage), every pipeline's stages, the micro-batch size, the
    options it was made under and the predicted step. The verifier checks
    that the mesh is the layout's bounding grid (a stage on an axis the mesh
    lacks, or beyond it, is an error), that no device is placed twice and
    that every pipeline's share is micro_batches x micro_batch.
  }];
  let parameters = (ins
    Frenzy_NestedParam<"::frenzy::MeshAttr">:$mesh,
    StringRefParameter<"the cluster YAML the layout was made for">:$cluster,
    StringRefParameter<"the choice that produced it", "\"\"">:$description,
    "int64_t":$global_batch,
    "int64_t":$micro_batch,
    "int64_t":$seq,
    StringRefParameter<"none, selective or full">:$recompute,
    DefaultValuedParameter<"int64_t", "0">:$full_recompute,
    Frenzy_BoolParam<"false">:$fixed_shares,
    Frenzy_BoolParam<"false">:$gpipe,
    // Megatron sequence parallelism in every TP group of more than one
    // rank (frenzy-tensor-parallel's sequence-parallel; the memory model
    // shards those groups' token-wise activations only then).
    Frenzy_BoolParam<"false">:$sequence_parallel,
    StringRefParameter<"why GPipe was not kept", "\"\"">:$schedule_note,
    Frenzy_F64Param<"0.0">:$pipeline_seconds,
    Frenzy_F64Param<"0.0">:$all_reduce_seconds,
    Frenzy_F64Param<"0.0">:$optimizer_seconds,
    Frenzy_AttrListParam<"::frenzy::PipelineAttr">:$pipelines,
    Frenzy_AttrListParam<"::frenzy::IdleAttr", "::llvm::SmallVector<::frenzy::IdleAttr>()">:$idle);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    double getStepSeconds() const {
      return getPipelineSeconds() + getAllReduceSeconds() +
             getOptimizerSeconds();
    }
  }];
}

def Frenzy_PlacementAttr : Frenzy_Attr<"Placement", "placement"> {
  let summary = "where one op runs: its coordinates on mesh axes, per pipeline";
  let description = [{
    `#frenzy.placement<pp = [1, 0], tp = [2, 1]>` on an op of a model block
    (`frenzy.placement`): for every pipeline (dp replica), the stage holding
    it (pp; -1 where no stage does) and the TP degree it is split over
    there (tp). Each axis must be one of the module layout's mesh.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::StringAttr">:$axes,
                        ArrayRefParameter<"::mlir::DenseI64ArrayAttr">:$values);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// One value per pipeline along `axis`; empty when not placed on it.
    ::llvm::ArrayRef<int64_t> on(::llvm::StringRef axis) const;
    /// The op's stage in pipeline `p`; -1 where no stage holds it.
    int64_t stageIn(size_t p) const;
    static PlacementAttr get(::mlir::MLIRContext *ctx,
                             ::llvm::ArrayRef<int64_t> stages,
                             ::llvm::ArrayRef<int64_t> tp);
  }];
}

//===-- The schedule -----------------------------------------------------===//

def Frenzy_StageOrderAttr : Frenzy_Attr<"StageOrder", "stage_order"> {
  let summary = "one stage's compute actions in order: `[F0 F1 B0 ...]`";
  let parameters = (ins ArrayRefParameter<"::frenzy::ScheduleAction">:$actions);
  let hasCustomAssemblyFormat = 1;
}

def Frenzy_PipelineOrderAttr : Frenzy_Attr<"PipelineOrder", "pipeline_order"> {
  let summary = "every stage's order of one pipeline's micro-batches";
  let description = [{
    `<micro_batches = 2, stages = [[F0 F1 B0 B1], [F0 B0 F1 B1]]>`: each
    stage runs every micro-batch below `micro_batches` forward (F) and then
    backward (B), each once.
  }];
  let parameters = (ins
    "int64_t":$micro_batches,
    Frenzy_AttrListParam<"::frenzy::StageOrderAttr">:$stages);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// Checked by the schedule that holds it (see MeshAttr::check).
    ::llvm::LogicalResult
    check(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
  }];
}

def Frenzy_ScheduleAttr : Frenzy_Attr<"Schedule", "schedule"> {
  let summary = "the pipeline schedule: kind and every stage's action order";
  let description = [{
    What frenzy-pipeline-schedule records on the module as
    `frenzy.schedule`, one PipelineOrder per pipeline of `frenzy.layout`.
  }];
  let parameters = (ins
    StringRefParameter<"1f1b or gpipe">:$kind,
    Frenzy_AttrListParam<"::frenzy::PipelineOrderAttr">:$pipelines);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // FRENZY_LAYOUT_ATTRS_TD
