//===- LayoutAttrs.cpp - the mesh, layout and placement attributes --------===//
//
// Parsers, printers and verifiers of FrenzyLayoutAttrs.td's mesh, stage,
// pipeline, layout and placement attributes, and the parameter helpers of
// LayoutParams.h. Each verifier checks what its attribute alone holds, so a
// hand-written or damaged .mlir file fails at parse time with the
// attribute's location; the checks across attributes (a placement against
// the mesh, a schedule against the layout) are in LayoutVerifier.cpp.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include <cstdio>
#include <map>
#include <set>

using namespace mlir;
using namespace frenzy;

//===-- Parameter helpers ------------------------------------------------===//

FailureOr<F64> attrparams::parseF64(AsmParser &parser) {
  APFloat v(0.0);
  if (parser.parseFloat(llvm::APFloat::IEEEdouble(), v))
    return failure();
  return F64(v.convertToDouble());
}

void attrparams::printF64(AsmPrinter &printer, F64 value) {
  printer.printFloat(APFloat(value.value));
}

FailureOr<bool> attrparams::parseBool(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected true or false");
}

void attrparams::printBool(AsmPrinter &printer, bool value) {
  printer << (value ? "true" : "false");
}

FailureOr<SmallVector<int64_t>> attrparams::parseI64List(AsmParser &parser) {
  SmallVector<int64_t> out;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(out.emplace_back());
      }))
    return failure();
  return out;
}

void attrparams::printI64List(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

//===-- Mesh --------------------------------------------------------------===//

bool MeshAttr::isKnownAxis(StringRef axis) {
  return llvm::is_contained({"pp", "dp", "tp", "sp", "cp", "ep"}, axis);
}

std::optional<int64_t> MeshAttr::sizeOf(StringRef axis) const {
  for (auto [name, size] : llvm::zip(getAxes(), getSizes()))
    if (name.getValue() == axis)
      return size;
  return std::nullopt;
}

int64_t MeshAttr::slots() const {
  int64_t n = 1;
  for (int64_t s : getSizes())
    n *= s;
  return n;
}

LogicalResult MeshAttr::check(function_ref<InFlightDiagnostic()> emitError,
                             ArrayRef<StringAttr> axes,
                             ArrayRef<int64_t> sizes) {
  if (axes.size() != sizes.size())
    return emitError() << "" << axes.size() << " axes but "
                       << sizes.size() << " sizes";
  if (axes.empty())
    return emitError() << "no axes; name at least one, e.g. <pp = 1>";
  std::set<StringRef> seen;
  for (auto [axis, size] : llvm::zip(axes, sizes)) {
    if (!isKnownAxis(axis.getValue()))
      return emitError() << "unknown axis '" << axis.getValue()
                         << "'; valid axes: pp, dp, tp, sp, cp, ep";
    if (!seen.insert(axis.getValue()).second)
      return emitError() << "axis '" << axis.getValue()
                         << "' used twice; name each axis once";
    if (size < 1)
      return emitError() << "axis '" << axis.getValue() << "' has size "
                         << size << "; sizes must be at least 1";
  }
  return success();
}

/// `name = value` entries between `<` and `>`, comma-separated; `value`
/// parsed by `each`.
static ParseResult
parseNamedEntries(AsmParser &parser,
                  function_ref<ParseResult(StringAttr name)> each) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::LessGreater, [&]() -> ParseResult {
        std::string name;
        if (parser.parseKeywordOrString(&name) || parser.parseEqual())
          return failure();
        return each(StringAttr::get(parser.getContext(), name));
      });
}

// #frenzy.mesh<dp = 2, pp = 2, tp = 1>
Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SmallVector<StringAttr> axes;
  SmallVector<int64_t> sizes;
  if (parseNamedEntries(parser, [&](StringAttr name) {
        axes.push_back(name);
        return parser.parseInteger(sizes.emplace_back());
      }))
    return {};
  return MeshAttr::get(parser.getContext(), ArrayRef<StringAttr>(axes),
                       ArrayRef<int64_t>(sizes));
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << '<';
  llvm::interleaveComma(llvm::zip(getAxes(), getSizes()), printer,
                        [&](auto axis) {
                          printer << std::get<0>(axis).getValue() << " = "
                                  << std::get<1>(axis);
                        });
  printer << '>';
}

//===-- Stage, pipeline, layout --------------------------------------------===//

/// Seconds as people write them (0.01, not 1.000000e-02).
static std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

LogicalResult
StageAttr::check(function_ref<InFlightDiagnostic()> emitError) const {
  int64_t node = getNode();
  ArrayRef<int64_t> devices = getDevices(), layers = getLayers();
  double seconds = getSeconds();
  if (node < 0)
    return emitError() << "node " << node << " is negative";
  if (devices.empty())
    return emitError() << "devices is empty; a stage runs on at least "
                          "one device";
  std::set<int64_t> seen;
  for (int64_t d : devices)
    if (d < 0 || !seen.insert(d).second)
      return emitError() << "device " << d
                         << (d < 0 ? " is negative" : " is listed twice");
  if (layers.size() != 2)
    return emitError() << "layers must be [first, last] (got "
                       << layers.size() << " values)";
  if (layers[0] < 0 || layers[1] < layers[0] - 1)
    return emitError() << "layers [" << layers[0] << ", " << layers[1]
                       << "] is not a range (last = first - 1 for none)";
  if (!(seconds >= 0) || getPeakBytes() < 0 || getActivationBytes() < 0)
    return emitError() << "seconds and bytes must not be negative";
  for (auto [name, part] :
       {std::pair{"forward_seconds", double(getForwardSeconds())},
        std::pair{"transfer_seconds", double(getTransferSeconds())}})
    if (!(part >= 0 && part <= seconds))
      return emitError() << name << " = " << num(part)
                         << " must be between 0 and seconds ("
                         << num(seconds) << ")";
  return success();
}

LogicalResult LayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, MeshAttr mesh,
    StringRef cluster, StringRef description, int64_t globalBatch,
    int64_t microBatch, int64_t seq, StringRef recompute,
    int64_t fullRecompute, bool fixedShares, bool gpipe,
    bool sequenceParallel, StringRef scheduleNote, F64 pipelineSeconds, F64 allReduceSeconds,
    F64 optimizerSeconds, ArrayRef<PipelineAttr> pipelines,
    ArrayRef<IdleAttr> idle) {
  if (globalBatch < 1 || microBatch < 1 || seq < 1)
    return emitError() << "layout: global_batch, micro_batch and seq must be "
                          "at least 1";
  if (!llvm::is_contained({"none", "selective", "full"}, recompute))
    return emitError() << "layout: recompute \"" << recompute
                       << "\" must be none, selective or full";
  if (pipelines.empty())
    return emitError() << "layout: pipelines is empty";
  // The nested attributes, each named by its place in the layout.
  if (failed(MeshAttr::check(
          [&] { return emitError() << "layout: mesh: "; }, mesh.getAxes(),
          mesh.getSizes())))
    return failure();
  for (auto [p, pipe] : llvm::enumerate(pipelines)) {
    auto at = [&, p = p](std::optional<size_t> s) {
      InFlightDiagnostic d = emitError();
      d << "layout: pipelines[" << p << "]";
      if (s)
        d << ".stages[" << *s << "]";
      d << ": ";
      return d;
    };
    if (pipe.getMicroBatches() < 0 || pipe.getSequences() < 0)
      return at(std::nullopt)
             << "micro_batches and sequences must not be negative";
    if (pipe.getStages().empty())
      return at(std::nullopt)
             << "stages is empty; a pipeline has at least one stage";
    for (auto [s, st] : llvm::enumerate(pipe.getStages()))
      if (failed(st.check([&, s = s] { return at(s); })))
        return failure();
  }
  // The mesh is the layout's bounding grid: dp = pipelines, pp = the
  // deepest pipeline, tp = the widest stage.
  int64_t depth = 0, width = 0;
  for (PipelineAttr p : pipelines) {
    depth = std::max<int64_t>(depth, int64_t(p.getStages().size()));
    for (StageAttr s : p.getStages())
      width = std::max(width, s.getTp());
  }
  for (auto [axis, need, what] :
       {std::tuple{"dp", int64_t(pipelines.size()), "pipelines"},
        std::tuple{"pp", depth, "stages in the deepest pipeline"},
        std::tuple{"tp", width, "devices in the widest stage"}}) {
    std::optional<int64_t> size = mesh.sizeOf(axis);
    if (!size)
      return emitError() << "layout: the stages are placed on axis '" << axis
                         << "', which the mesh does not have; add " << axis
                         << " = " << need << " to the mesh";
    if (*size != need)
      return emitError() << "layout: mesh axis " << axis << " = " << *size
                         << " but the layout has " << need << " " << what;
  }
  // Every (node, device) runs one stage, and idle ones none.
  std::map<std::pair<int64_t, int64_t>, std::string> placed;
  auto place = [&](int64_t node, int64_t d, std::string where) {
    auto [it, fresh] = placed.try_emplace({node, d}, where);
    if (!fresh)
      emitError() << "layout: node " << node << " device " << d
                  << " is placed twice (" << it->second << " and " << where
                  << ")";
    return fresh;
  };
  for (auto [p, pipe] : llvm::enumerate(pipelines)) {
    if (pipe.getSequences() != pipe.getMicroBatches() * microBatch)
      return emitError() << "layout: pipelines[" << p << "] has sequences = "
                         << pipe.getSequences() << ", not micro_batches x "
                         << "micro_batch = "
                         << pipe.getMicroBatches() * microBatch;
    for (auto [s, st] : llvm::enumerate(pipe.getStages()))
      for (int64_t d : st.getDevices())
        if (!place(st.getNode(), d,
                   "pipelines[" + std::to_string(p) + "].stages[" +
                       std::to_string(s) + "]"))
          return failure();
  }
  for (auto [i, g] : llvm::enumerate(idle))
    for (int64_t d : g.getDevices())
      if (!place(g.getNode(), d, "idle[" + std::to_string(i) + "]"))
        return failure();
  return success();
}

//===-- Placement -----------------------------------------------------------===//

LogicalResult
PlacementAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<StringAttr> axes,
                      ArrayRef<DenseI64ArrayAttr> values) {
  if (axes.size() != values.size())
    return emitError() << "placement: " << axes.size() << " axes but "
                       << values.size() << " value lists";
  std::set<StringRef> seen;
  for (auto [axis, v] : llvm::zip(axes, values)) {
    if (!MeshAttr::isKnownAxis(axis.getValue()))
      return emitError() << "placement: unknown axis '" << axis.getValue()
                         << "'; valid axes: pp, dp, tp, sp, cp, ep";
    if (!seen.insert(axis.getValue()).second)
      return emitError() << "placement: axis '" << axis.getValue()
                         << "' used twice";
    if (v.size() != values.front().size())
      return emitError() << "placement: every axis needs one value per "
                            "pipeline ("
                         << axes.front().getValue() << " has "
                         << values.front().size() << ", " << axis.getValue()
                         << " " << v.size() << ")";
  }
  return success();
}

ArrayRef<int64_t> PlacementAttr::on(StringRef axis) const {
  for (auto [name, v] : llvm::zip(getAxes(), getValues()))
    if (name.getValue() == axis)
      return v.asArrayRef();
  return {};
}

int64_t PlacementAttr::stageIn(size_t p) const {
  ArrayRef<int64_t> pp = on("pp");
  return p < pp.size() ? pp[p] : -1;
}

PlacementAttr PlacementAttr::get(MLIRContext *ctx, ArrayRef<int64_t> stages,
                                 ArrayRef<int64_t> tp) {
  Builder b(ctx);
  StringAttr axes[] = {b.getStringAttr("pp"), b.getStringAttr("tp")};
  DenseI64ArrayAttr values[] = {b.getDenseI64ArrayAttr(stages),
                                b.getDenseI64ArrayAttr(tp)};
  return get(ctx, ArrayRef<StringAttr>(axes),
             ArrayRef<DenseI64ArrayAttr>(values));
}

// #frenzy.placement<pp = [1, 0], tp = [1, 1]>
Attribute PlacementAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<StringAttr> axes;
  SmallVector<DenseI64ArrayAttr> values;
  if (parseNamedEntries(parser, [&](StringAttr name) -> ParseResult {
        FailureOr<SmallVector<int64_t>> list = attrparams::parseI64List(parser);
        if (failed(list))
          return failure();
        axes.push_back(name);
        values.push_back(DenseI64ArrayAttr::get(parser.getContext(), *list));
        return success();
      }))
    return {};
  return PlacementAttr::getChecked([&] { return parser.emitError(loc); },
                                   parser.getContext(),
                                   ArrayRef<StringAttr>(axes),
                                   ArrayRef<DenseI64ArrayAttr>(values));
}

void PlacementAttr::print(AsmPrinter &printer) const {
  printer << '<';
  llvm::interleaveComma(llvm::zip(getAxes(), getValues()), printer,
                        [&](auto axis) {
                          printer << std::get<0>(axis).getValue() << " = ";
                          attrparams::printI64List(
                              printer, std::get<1>(axis).asArrayRef());
                        });
  printer << '>';
}
