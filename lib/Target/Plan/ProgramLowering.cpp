//===- ProgramLowering.cpp - MLIR step function to a flat Program ---------===//
//
// The runtime must not depend on MLIR, so the step function is flattened into
// numbered tensors and kernel calls. Op attributes become a small tagged map;
// the kernel name is the op name without the dialect prefix, so a new op
// needs a runtime kernel of the same name and nothing here.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Target/Plan/PlanWriter.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "plan.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace frenzy;

namespace {

FailureOr<plan::DType> dtypeOf(Type t, Location loc) {
  if (t.isF32())
    return plan::F32;
  if (t.isF16())
    return plan::F16;
  if (t.isBF16())
    return plan::BF16;
  if (t.isInteger(64))
    return plan::I64;
  if (t.isInteger(32))
    return plan::I32;
  if (t.isInteger(1))
    return plan::BOOL;
  return emitError(loc, "the runtime has no element type ") << t;
}

std::string nodeOf(Location loc) {
  if (auto n = dyn_cast<NameLoc>(loc))
    return n.getName().str();
  if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (std::string s = nodeOf(l); !s.empty())
        return s;
  return "";
}

class Lowering {
public:
  Lowering(plan::Program &out, std::vector<Operation *> *instrOps)
      : out(out), instrOps(instrOps) {}

  FailureOr<int32_t> tensorFor(Value v, plan::TensorKind kind,
                               StringRef name = "") {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return emitError(v.getLoc(), "the runtime needs static tensor shapes, "
                                   "got ")
             << v.getType();
    auto dt = dtypeOf(t.getElementType(), v.getLoc());
    if (failed(dt))
      return failure();
    plan::Tensor *pt = out.add_tensors();
    int32_t id = out.tensors_size() - 1;
    pt->set_id(id);
    pt->set_name(name.str());
    pt->set_dtype(*dt);
    pt->set_kind(kind);
    for (int64_t d : t.getShape())
      pt->add_shape(d);
    ids[v] = id;
    return id;
  }

  LogicalResult constant(ConstantOp op) {
    auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!attr)
      return op.emitError("the runtime needs dense constant data");
    auto id = tensorFor(op.getResult(), plan::CONSTANT);
    if (failed(id))
      return failure();
    plan::Tensor *t = out.mutable_tensors(*id);
    ArrayRef<char> raw = attr.getRawData();
    // i1 is stored bit-packed by MLIR; the runtime wants a byte per element.
    if (attr.getElementType().isInteger(1)) {
      std::string bytes;
      for (bool b : attr.getValues<bool>())
        bytes.push_back(b ? 1 : 0);
      t->set_data(bytes);
      t->set_splat(attr.isSplat());
      if (attr.isSplat())
        t->set_data(bytes.substr(0, 1));
      return success();
    }
    t->set_data(std::string(raw.data(), raw.size()));
    t->set_splat(attr.isSplat());
    return success();
  }

  LogicalResult param(ParamOp op) {
    auto id = tensorFor(op.getResult(), plan::PARAM, op.getName());
    if (failed(id))
      return failure();
    plan::ParamSource *p = out.add_params();
    p->set_name(op.getName().str());
    p->set_tensor(*id);
    p->set_trainable(op.getTrainable());
    p->set_storage(op.getStorage().str());
    if (auto v = op.getValueFrom())
      p->set_value_from(v->str());
    if (auto f = op.getFile())
      p->set_file(f->str());
    if (auto o = op.getOffset())
      p->set_offset(*o);
    if (auto l = op.getLength())
      p->set_length(*l);
    if (auto s = op->getAttrOfType<DenseI64ArrayAttr>("frenzy.shard"))
      for (int64_t v : s.asArrayRef())
        p->add_shard(v);
    return success();
  }

  LogicalResult attribute(Operation *op, NamedAttribute a, plan::Attr &pa) {
    Attribute v = a.getValue();
    if (auto b = dyn_cast<BoolAttr>(v))
      pa.set_i(b.getValue());
    else if (auto i = dyn_cast<IntegerAttr>(v))
      pa.set_i(i.getInt());
    else if (auto f = dyn_cast<FloatAttr>(v))
      pa.set_f(f.getValueAsDouble());
    else if (auto s = dyn_cast<StringAttr>(v))
      pa.set_s(s.str());
    else if (isa<UnitAttr>(v))
      pa.set_i(1);
    else if (auto arr = dyn_cast<DenseI64ArrayAttr>(v))
      for (int64_t x : arr.asArrayRef())
        pa.mutable_ints()->add_values(x);
    else
      return op->emitError("the runtime cannot take attribute '")
             << a.getName() << "' = " << v;
    return success();
  }

  LogicalResult instr(Operation *op) {
    plan::Instr *in = out.add_instrs();
    if (instrOps)
      instrOps->push_back(op);
    in->set_op(op->getName().stripDialect().str());
    in->set_node(nodeOf(op->getLoc()));
    if (auto blk = op->getAttrOfType<BlockAttr>(FrenzyDialect::kBlockAttrName)) {
      in->set_block(blk.getIndex());
      in->set_has_block(true);
    }
    in->set_backward(op->hasAttr("frenzy.backward"));
    if (auto c = dyn_cast<CostOpInterface>(op)) {
      in->set_flops(double(c.getFlops()));
      in->set_bytes(double(c.getBytesRead() + c.getBytesWritten()));
    }
    for (Value v : op->getOperands())
      in->add_inputs(ids.lookup(v));
    for (Value r : op->getResults()) {
      auto id = tensorFor(r, plan::ACTIVATION);
      if (failed(id))
        return failure();
      in->add_outputs(*id);
    }
    for (NamedAttribute a : op->getAttrs()) {
      if (a.getName().strref().starts_with("frenzy."))
        continue;
      plan::Attr pa;
      if (failed(attribute(op, a, pa)))
        return failure();
      (*in->mutable_attrs())[a.getName().str()] = pa;
    }
    return success();
  }

  LogicalResult run(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     "frenzy.name");
      std::string n = name ? name.str() : "arg" + std::to_string(arg.getArgNumber());
      auto id = tensorFor(arg, plan::INPUT, n);
      if (failed(id))
        return failure();
      plan::Io *io = out.add_inputs();
      io->set_name(n);
      io->set_tensor(*id);
    }
    for (Operation &op : func.getBody().front()) {
      LogicalResult r = success();
      if (auto c = dyn_cast<ConstantOp>(op))
        r = constant(c);
      else if (auto p = dyn_cast<ParamOp>(op))
        r = param(p);
      else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
          auto name = func.getResultAttrOfType<StringAttr>(i, "frenzy.name");
          plan::Io *io = out.add_outputs();
          io->set_name(name ? name.str() : "out" + std::to_string(i));
          io->set_tensor(ids.lookup(v));
        }
      } else
        r = instr(&op);
      if (failed(r))
        return failure();
    }
    return success();
  }

private:
  plan::Program &out;
  std::vector<Operation *> *instrOps;
  llvm::DenseMap<Value, int32_t> ids;
};

} // namespace

LogicalResult frenzy::lowerProgram(ModuleOp module, plan::Program &out,
                                   std::vector<Operation *> *instrOps) {
  auto func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func)
    func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func)
    return module.emitError("no @train_step or @forward function to lower");
  if (auto t = module->getAttrOfType<IntegerAttr>("frenzy.tp_degree"))
    out.set_tp_degree(t.getInt());
  return Lowering(out, instrOps).run(func);
}
