//===- LayoutVerifier.cpp - layout attributes checked against each other --===//
//
// FrenzyDialect::verifyOperationAttribute: the module's frenzy.layout and
// frenzy.schedule and every op's frenzy.placement must agree (one schedule
// pipeline per layout pipeline with its stages and micro-batches; a
// placement only on the mesh's axes and on stages that exist). Each
// attribute's own verifier has run when it was built; these checks need two
// at once, so they run with the IR verifier, at the op that carries the
// attribute (its location is the error's).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace frenzy;

static LogicalResult verifySchedule(Operation *op, ScheduleAttr schedule) {
  auto layout = op->getAttrOfType<LayoutAttr>(FrenzyDialect::kLayoutAttrName);
  if (!layout)
    return op->emitError() << FrenzyDialect::kScheduleAttrName
                           << " needs the module's "
                           << FrenzyDialect::kLayoutAttrName
                           << ": run frenzy-partition first";
  ArrayRef<PipelineAttr> pipes = layout.getPipelines();
  ArrayRef<PipelineOrderAttr> orders = schedule.getPipelines();
  if (orders.size() != pipes.size())
    return op->emitError() << FrenzyDialect::kScheduleAttrName << " has "
                           << orders.size() << " pipelines; the layout has "
                           << pipes.size();
  for (auto [p, pipe] : llvm::enumerate(pipes)) {
    PipelineOrderAttr order = orders[p];
    if (order.getStages().size() != pipe.getStages().size())
      return op->emitError()
             << FrenzyDialect::kScheduleAttrName << ": pipeline " << p
             << " orders " << order.getStages().size()
             << " stages; the layout's has " << pipe.getStages().size();
    if (order.getMicroBatches() != pipe.getMicroBatches())
      return op->emitError()
             << FrenzyDialect::kScheduleAttrName << ": pipeline " << p
             << " schedules " << order.getMicroBatches()
             << " micro-batches; the layout's runs " << pipe.getMicroBatches();
  }
  return success();
}

static LogicalResult verifyPlacement(Operation *op, PlacementAttr placement) {
  auto module = op->getParentOfType<ModuleOp>();
  auto layout = module ? module->getAttrOfType<LayoutAttr>(
                             FrenzyDialect::kLayoutAttrName)
                       : LayoutAttr();
  if (!layout)
    return op->emitError() << FrenzyDialect::kPlacementAttrName
                           << " without the module's "
                           << FrenzyDialect::kLayoutAttrName
                           << ": there is no mesh to place on";
  MeshAttr mesh = layout.getMesh();
  ArrayRef<PipelineAttr> pipes = layout.getPipelines();
  for (auto [axis, values] :
       llvm::zip(placement.getAxes(), placement.getValues())) {
    if (!mesh.sizeOf(axis.getValue()))
      return op->emitError()
             << FrenzyDialect::kPlacementAttrName << ": axis '"
             << axis.getValue() << "' is not an axis of the layout's mesh";
    if (size_t(values.size()) != pipes.size())
      return op->emitError()
             << FrenzyDialect::kPlacementAttrName << ": " << axis.getValue()
             << " has " << values.size() << " values; the layout has "
             << pipes.size() << " pipelines";
  }
  ArrayRef<int64_t> tp = placement.on("tp");
  for (auto [p, pipe] : llvm::enumerate(pipes)) {
    int64_t s = placement.stageIn(p);
    int64_t stages = int64_t(pipe.getStages().size());
    if (s < -1 || s >= stages)
      return op->emitError()
             << FrenzyDialect::kPlacementAttrName << ": stage " << s
             << " of pipeline " << p << " does not exist (it has " << stages
             << ")";
    int64_t want = s < 0 ? 0 : pipe.getStages()[size_t(s)].getTp();
    if (!tp.empty() && tp[p] != want)
      return op->emitError()
             << FrenzyDialect::kPlacementAttrName << ": tp " << tp[p]
             << " in pipeline " << p << ", but its stage " << s << " has "
             << want << " devices";
  }
  return success();
}

LogicalResult FrenzyDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto wrongKind = [&](StringRef want) {
    return op->emitError() << name << " must be a " << want;
  };
  if (name == kLayoutAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << name << " belongs on the module";
    if (!isa<LayoutAttr>(attr.getValue()))
      return wrongKind("#frenzy.layout<...>");
    return success();
  }
  if (name == kScheduleAttrName) {
    auto schedule = dyn_cast<ScheduleAttr>(attr.getValue());
    if (!schedule)
      return wrongKind("#frenzy.schedule<...>");
    return verifySchedule(op, schedule);
  }
  if (name == kPlacementAttrName) {
    auto placement = dyn_cast<PlacementAttr>(attr.getValue());
    if (!placement)
      return wrongKind("#frenzy.placement<...>");
    return verifyPlacement(op, placement);
  }
  return success();
}
