//===- GraphEmitter.cpp - values, parameters and the function of an import ===//
#include "GraphEmitter.h"
#include "onnx/defs/schema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MathExtras.h"

#include <sys/stat.h>

using namespace mlir;

namespace frenzy::import {

Type elementType(MLIRContext *ctx, int32_t t) {
  using onnx::TensorProto;
  switch (t) {
  case TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case TensorProto::FLOAT16:
    return Float16Type::get(ctx);
  case TensorProto::BFLOAT16:
    return BFloat16Type::get(ctx);
  case TensorProto::DOUBLE:
    return Float64Type::get(ctx);
  case TensorProto::INT64:
    return IntegerType::get(ctx, 64);
  case TensorProto::INT32:
    return IntegerType::get(ctx, 32);
  case TensorProto::INT8:
    return IntegerType::get(ctx, 8);
  case TensorProto::UINT8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case TensorProto::BOOL:
    return IntegerType::get(ctx, 1);
  default:
    return {};
  }
}

DenseElementsAttr denseAttr(const ConstantTensor &c, RankedTensorType type) {
  Type et = type.getElementType();
  int64_t n = c.splat ? 1 : type.getNumElements();
  if (auto ft = dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> vals;
    for (int64_t i = 0; i < n; ++i) {
      APFloat f(c.valueAt(i));
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(f);
    }
    return c.splat ? DenseElementsAttr::get(type, vals[0])
                   : DenseElementsAttr::get(type, vals);
  }
  auto it = cast<IntegerType>(et);
  SmallVector<APInt> vals;
  for (int64_t i = 0; i < n; ++i)
    vals.push_back(APInt(it.getWidth(),
                         c.isFloat() ? saturatingInt(c.floatAt(i)) : c.intAt(i),
                         /*isSigned=*/it.getWidth() > 1));
  return c.splat ? DenseElementsAttr::get(type, vals[0])
                 : DenseElementsAttr::get(type, vals);
}

GraphEmitter::GraphEmitter(LoadedModel &model, ResolvedGraph &resolved,
                           const OnnxImportOptions &options, MLIRContext *ctx)
    : model(model), resolved(resolved), ctx(ctx), b(ctx),
      fileLoc(FileLineColLoc::get(ctx, model.path, 0, 0)) {
  roles.emplace(model.model.graph(), options, error);
  for (const auto &n : model.model.graph().node())
    if (n.op_type() == "Constant")
      constantNodes[n.output(0)] = &n;
}

Location GraphEmitter::loc(const onnx::NodeProto &node) {
  if (node.name().empty())
    return fileLoc;
  return NameLoc::get(StringAttr::get(ctx, node.name()), fileLoc);
}

RankedTensorType GraphEmitter::type(const std::string &name) {
  auto it = resolved.types.find(name);
  if (it == resolved.types.end() || !it->second.has_tensor_type()) {
    if (!error)
      error = ImportError{"no type was inferred for tensor '" + name + "'"};
    return RankedTensorType::get({}, b.getF32Type());
  }
  const auto &tt = it->second.tensor_type();
  SmallVector<int64_t> shape;
  for (const auto &d : tt.shape().dim())
    shape.push_back(d.dim_value());
  Type et = elementType(ctx, tt.elem_type());
  if (!et) {
    if (!error)
      error = ImportError{"tensor '" + name + "' has unsupported element type " +
                          std::to_string(tt.elem_type())};
    et = b.getF32Type();
  }
  return RankedTensorType::get(shape, et);
}

Value GraphEmitter::constantValue(const std::string &name,
                                  const ConstantTensor &c) {
  Type et = elementType(ctx, c.dtype);
  if (!et) {
    error = ImportError{"constant '" + name + "' has an unsupported type"};
    return {};
  }
  auto ty = RankedTensorType::get(c.shape, et);
  OpBuilder::InsertionGuard guard(b);
  setValueInsertionPoint();
  auto op = b.create<ConstantOp>(NameLoc::get(StringAttr::get(ctx, name), fileLoc),
                                 denseAttr(c, ty));
  values[name] = op.getResult();
  lastValueOp = op;
  return op.getResult();
}

Value GraphEmitter::param(const std::string &name, const std::string &source) {
  const onnx::TensorProto *init = nullptr;
  const onnx::NodeProto *constNode = nullptr;
  if (auto it = resolved.initializers.find(source);
      it != resolved.initializers.end())
    init = it->second;
  else if (auto it = constantNodes.find(source); it != constantNodes.end())
    constNode = it->second;
  else
    return {};
  int32_t dtype;
  SmallVector<int64_t> shape;
  const onnx::TensorProto *tensor = init;
  if (constNode)
    for (const auto &a : constNode->attribute())
      if (a.name() == "value")
        tensor = &a.t();
  if (!tensor) {
    error = ImportError{"Constant node '" + constNode->name() +
                        "' has no tensor value"};
    return {};
  }
  dtype = tensor->data_type();
  shape.assign(tensor->dims().begin(), tensor->dims().end());
  Type et = elementType(ctx, dtype);
  if (!et) {
    error = ImportError{"parameter '" + name + "' has unsupported element type " +
                        std::to_string(dtype)};
    return {};
  }
  auto ty = RankedTensorType::get(shape, et);

  NamedAttrList attrs;
  attrs.append("name", b.getStringAttr(name));
  if (source != name)
    attrs.append("value_from", b.getStringAttr(source));
  if (constNode) {
    attrs.append("storage", b.getStringAttr("constant"));
  } else if (tensor->data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : tensor->external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if ((kv.key() == "offset" || kv.key() == "length") &&
               (StringRef(kv.value())
                    .getAsInteger(10, kv.key() == "offset" ? offset : length) ||
                (kv.key() == "offset" ? offset : length) < 0)) {
        error = ImportError{"parameter '" + name + "' has external data " +
                            kv.key() + " '" + kv.value() +
                            "', not a byte count; the file is corrupt"};
        return {};
      }
    }
    if (location.empty()) {
      error = ImportError{"parameter '" + name +
                          "' is stored externally but names no file"};
      return {};
    }
    if (length < 0)
      length = tensorBytes(ty);
    std::string full = model.directory + "/" + location;
    struct stat st;
    if (stat(full.c_str(), &st) != 0) {
      error = ImportError{"external data file '" + location + "' of parameter '" +
                          name + "' not found in '" + model.directory +
                          "'; keep the data file next to the model"};
      return {};
    }
    int64_t end;
    if (llvm::AddOverflow(offset, length, end) || end > (int64_t)st.st_size) {
      error = ImportError{"external data file '" + location + "' is too short for " +
                          "parameter '" + name + "' (needs " +
                          (end < offset ? std::string("more than 2^63")
                                        : std::to_string(end)) +
                          " bytes, has " +
                          std::to_string((int64_t)st.st_size) + ")"};
      return {};
    }
    attrs.append("storage", b.getStringAttr("external"));
    attrs.append("file", b.getStringAttr(location));
    attrs.append("offset", b.getI64IntegerAttr(offset));
    attrs.append("length", b.getI64IntegerAttr(length));
  } else {
    attrs.append("storage", b.getStringAttr("inline"));
  }
  // Buffers say why they are not trained (the summary lists them).
  std::optional<std::string> buffer =
      isa<FloatType>(et) ? roles->bufferReason(name, error)
                         : std::optional<std::string>("not a float tensor");
  if (error)
    return {};
  if (buffer)
    attrs.append(kBufferReasonAttr, b.getStringAttr(*buffer));
  else
    attrs.append("trainable", b.getUnitAttr());

  OpBuilder::InsertionGuard guard(b);
  setValueInsertionPoint();
  auto op = b.create<ParamOp>(NameLoc::get(StringAttr::get(ctx, name), fileLoc),
                              TypeRange{ty}, ValueRange{}, attrs.getAttrs());
  values[name] = op.getResult();
  lastValueOp = op;
  return op.getResult();
}

bool looksLikeParameterName(const std::string &name) {
  // torch names generated tensors "/scope/Op_output_0" or "onnx::Op_12";
  // parameters carry their module path: "transformer.h.1.ln_2.weight".
  return name.find('/') == std::string::npos &&
         name.find("::") == std::string::npos &&
         name.find('.') != std::string::npos;
}

Value GraphEmitter::aliasOrDistinctParam(const onnx::NodeProto &identity) {
  const std::string &in = identity.input(0), &out = identity.output(0);
  bool stored = resolved.initializers.count(in) || constantNodes.count(in);
  if (stored && !values.count(out) && looksLikeParameterName(out) &&
      looksLikeParameterName(in))
    // Exporters deduplicate parameters that merely start out equal (all
    // LayerNorm weights are ones) and alias them by Identity; they are
    // still distinct parameters and train apart, so each gets its own param
    // whose initial bytes come from the shared tensor.
    return param(out, in);
  return input(identity, 0);
}

void GraphEmitter::setValueInsertionPoint() {
  // Params and constants gather at the top of the body in first-use order.
  if (lastValueOp)
    b.setInsertionPointAfter(lastValueOp);
  else
    b.setInsertionPointToStart(body);
}

Value GraphEmitter::value(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  if (auto it = resolved.constants.find(name); it != resolved.constants.end())
    return constantValue(name, it->second);
  if (Value p = param(name, name))
    return p;
  if (!error)
    error = ImportError{"tensor '" + name + "' has no value"};
  return {};
}

Value GraphEmitter::input(const onnx::NodeProto &node, int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return {};
  return value(node.input(i));
}

const ConstantTensor *GraphEmitter::constant(const onnx::NodeProto &node,
                                             int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return nullptr;
  auto it = resolved.constants.find(node.input(i));
  return it == resolved.constants.end() ? nullptr : &it->second;
}

std::string describeNode(const onnx::NodeProto &node, const LoadedModel &model) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto it = model.opsets.find(domain);
  std::string name = node.name().empty()
                         ? "producing '" + (node.output_size() ? node.output(0) : "") + "'"
                         : "'" + node.name() + "'";
  return "node " + name + " (op " + node.op_type() + ", domain '" + domain +
         "', opset " + std::to_string(it == model.opsets.end() ? 0 : it->second) +
         ")";
}

/// The handler for a node under the model's opset, or why there is none.
static const HandlerEntry *findHandler(const onnx::NodeProto &node,
                                       int64_t opset, std::string &why) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  bool sawType = false;
  if (domain.empty())
    for (const HandlerEntry &h : nodeHandlers()) {
      if (node.op_type() != h.opType)
        continue;
      sawType = true;
      if (opset >= h.sinceOpset && opset <= h.untilOpset)
        return &h;
    }
  why = sawType ? "this opset version of the op is not supported; re-export "
                  "with opset 14 to 17"
                : "unsupported operator; re-export without it or file an issue "
                  "naming the op";
  return nullptr;
}

std::optional<ImportError> checkSupported(const LoadedModel &model) {
  for (const auto &node : model.model.graph().node()) {
    if (node.op_type() == "Constant" && node.domain().empty())
      continue;
    std::string why;
    if (!findHandler(node, model.defaultOpset(), why))
      return ImportError{describeNode(node, model) + ": " + why};
  }
  return std::nullopt;
}

/// Why a node leaves out an input its op requires, or nothing. ONNX marks
/// an absent optional input with an empty name; in a required or variadic
/// position that would hand the handler a null value for an operand its op
/// needs (a crash in the op builder), so it is refused here, for every op.
static std::optional<std::string>
missingRequiredInput(const onnx::NodeProto &node, int64_t opset) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), int(opset), domain);
  if (!schema)
    return std::nullopt;
  const auto &formal = schema->inputs();
  for (size_t i = 0; i < formal.size(); ++i) {
    auto option = formal[i].GetOption();
    if (option == onnx::OpSchema::Optional)
      continue;
    size_t last = option == onnx::OpSchema::Variadic
                      ? std::max<size_t>(i + 1, size_t(node.input_size()))
                      : i + 1;
    for (size_t k = i; k < last; ++k)
      if (int(k) >= node.input_size() || node.input(int(k)).empty())
        return "input " + std::to_string(k) + " ('" + formal[i].GetName() +
               "') is required but " +
               (int(k) >= node.input_size() ? "missing" : "empty") +
               "; give the node that input";
    if (option == onnx::OpSchema::Variadic)
      break;
  }
  return std::nullopt;
}

std::optional<ImportError> GraphEmitter::emitNode(const onnx::NodeProto &node) {
  bool allKnown = true;
  for (const auto &o : node.output())
    allKnown &= o.empty() || resolved.constants.count(o) > 0;
  // Folded on the host (materialised where used), or a weight held by a
  // Constant node (a param where used).
  if (allKnown || node.op_type() == "Constant")
    return std::nullopt;
  std::string why;
  const HandlerEntry *h = findHandler(node, opset(), why);
  if (!h)
    return ImportError{describeNode(node, model) + ": " + why};
  if (auto missing = missingRequiredInput(node, opset()))
    return ImportError{describeNode(node, model) + ": " + *missing};
  // Materialise every operand first, so handlers never see a null value.
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !resolved.constants.count(node.input(i)) &&
        !input(node, i))
      return error && error->wholeModel
                 ? *error
                 : ImportError{describeNode(node, model) + ": " +
                               (error ? error->message : "missing input")};
  Operation *before = body->empty() ? nullptr : &body->back();
  auto err = h->handler(*this, node);
  if (error && error->wholeModel)
    return error;
  if (err)
    return ImportError{describeNode(node, model) + ": " + err->message};
  if (error)
    return ImportError{describeNode(node, model) + ": " + error->message};
  if (std::optional<std::string> why = verifyNewOps(before))
    return ImportError{describeNode(node, model) + ": " + *why +
                       " (the model's types or shapes are inconsistent; "
                       "ONNX shape inference let it through); check the "
                       "model with onnx.checker.check_model(model, "
                       "full_check=True)"};
  return std::nullopt;
}

std::optional<std::string> GraphEmitter::verifyNewOps(Operation *before) {
  // ONNX inference runs without type checking and accepts some malformed
  // nodes (fuzzing found mixed element types, short perms, Reshapes of
  // another size); an op the verifier rejects must be refused here, naming
  // the node, rather than leave the importer as invalid IR.
  std::optional<std::string> first;
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && !first)
      first = d.str();
    return success();
  });
  Operation *op = before          ? before->getNextNode()
                  : body->empty() ? nullptr
                                  : &body->front();
  for (; op; op = op->getNextNode())
    if (failed(verify(op, /*verifyRecursively=*/false)))
      return first ? first : std::optional<std::string>("invalid operation");
  return std::nullopt;
}

OwningOpRef<ModuleOp> GraphEmitter::emit(std::optional<ImportError> &err) {
  const onnx::GraphProto &g = model.model.graph();
  if ((err = error)) // a --frozen/--trainable pattern that does not parse
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());

  std::unordered_set<std::string> inits;
  for (const auto &t : g.initializer())
    inits.insert(t.name());
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const auto &in : g.input()) {
    if (inits.count(in.name()))
      continue;
    argTypes.push_back(type(in.name()));
    argNames.push_back(in.name());
  }
  auto func = b.create<func::FuncOp>(fileLoc, "forward",
                                     b.getFunctionType(argTypes, {}));
  body = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    values[name] = body->getArgument(i);
    body->getArgument(i).setLoc(NameLoc::get(b.getStringAttr(name), fileLoc));
    func.setArgAttr(i, "frenzy.name", b.getStringAttr(name));
  }
  b.setInsertionPointToEnd(body);
  for (const auto &node : g.node()) {
    if ((err = emitNode(node)) || (err = error))
      return nullptr;
  }
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &o : g.output()) {
    Value v = value(o.name());
    if (error) {
      err = error;
      return nullptr;
    }
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  if ((err = roles->unusedPattern()))
    return nullptr;
  b.create<func::ReturnOp>(fileLoc, results);
  func.setType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, o] : llvm::enumerate(g.output()))
    func.setResultAttr(i, "frenzy.name", b.getStringAttr(o.name()));

  ModuleOp m = *module;
  m->setAttr("frenzy.source", b.getStringAttr(model.path));
  m->setAttr("frenzy.opset", b.getI64IntegerAttr(model.defaultOpset()));
  if (!model.model.producer_name().empty())
    m->setAttr("frenzy.producer",
               b.getStringAttr(model.model.producer_name() + " " +
                               model.model.producer_version()));
  return module;
}

} // namespace frenzy::import
