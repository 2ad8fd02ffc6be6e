//===- OnnxModel.cpp - load ONNX files and resolve every shape statically --===//
//
// ONNX shape inference alone leaves exports symbolic: torch writes
// x.size(0) as Shape -> Gather -> Unsqueeze -> Concat -> Reshape. After the
// symbolic dims are bound, this file alternates ONNX inference with host
// folding of those chains until nothing changes, so every tensor has a static
// type. Exceptions from the ONNX library stop at this file's edge.
//
//===----------------------------------------------------------------------===//
#include "OnnxModel.h"
#include "ShapeLimits.h"

#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace frenzy::import {
using onnx::TensorProto;

int64_t LoadedModel::defaultOpset() const {
  auto it = opsets.find("");
  return it == opsets.end() ? 0 : it->second;
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

static std::optional<ImportError> fail(std::string msg) {
  return ImportError{std::move(msg)};
}

std::optional<ImportError> loadModel(const std::string &path, LoadedModel &out) {
  out.path = path;
  size_t slash = path.find_last_of('/');
  out.directory = slash == std::string::npos ? "." : path.substr(0, slash);
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return fail("cannot open the model file: no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail("cannot open the model file for reading");

  if (endsWith(path, ".onnxtext") || endsWith(path, ".onnxtxt")) {
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    try {
      onnx::Status status = onnx::OnnxParser::Parse(out.model, s.c_str());
      if (!status.IsOK())
        return fail("not a valid ONNX text model: " + status.ErrorMessage() +
                    "; see onnx/defs/parser.h for the syntax");
    } catch (const std::exception &e) {
      return fail(std::string("not a valid ONNX text model: ") + e.what());
    }
  } else {
    google::protobuf::io::IstreamInputStream zero(&in);
    google::protobuf::io::CodedInputStream coded(&zero);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!out.model.ParseFromCodedStream(&coded) ||
        !coded.ConsumedEntireMessage())
      return fail("not a valid ONNX model: the protobuf is truncated or "
                  "corrupt; re-export the model");
  }
  if (out.model.ir_version() <= 0 || !out.model.has_graph() ||
      out.model.graph().node_size() == 0)
    return fail("not an ONNX model (no IR version or an empty graph); pass a "
                "file written by an ONNX exporter");
  for (const auto &o : out.model.opset_import())
    out.opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  if (out.defaultOpset() == 0)
    return fail("the model imports no default-domain opset");

  // ONNX shape inference dereferences the type of every graph input: an
  // input without one (legal protobuf, legal text syntax) crashed it.
  for (const auto &i : out.model.graph().input())
    if (!i.type().has_tensor_type() || i.type().tensor_type().elem_type() == 0)
      return fail("graph input '" + i.name() +
                  "' has no tensor type (element type and shape); a model "
                  "input must declare one");
  // A file cut at a field boundary still parses; a dangling name gives it away.
  std::unordered_set<std::string> produced;
  for (const auto &i : out.model.graph().input())
    produced.insert(i.name());
  for (const auto &t : out.model.graph().initializer())
    produced.insert(t.name());
  for (const auto &n : out.model.graph().node()) {
    for (const auto &i : n.input())
      if (!i.empty() && !produced.count(i))
        return fail("node '" + n.name() + "' (" + n.op_type() +
                    ") reads tensor '" + i +
                    "' that nothing produces; the file is truncated or the "
                    "graph is not topologically sorted");
    for (const auto &o : n.output())
      produced.insert(o);
  }
  for (const auto &o : out.model.graph().output())
    if (!produced.count(o.name()))
      return fail("graph output '" + o.name() +
                  "' is never produced; the file is truncated or corrupt");
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Binding symbolic dims
//===----------------------------------------------------------------------===//

static std::optional<ImportError>
bindInputDims(onnx::GraphProto &g, const OnnxImportOptions &options,
              std::vector<DimBinding> &bindings) {
  std::unordered_set<std::string> inits;
  for (const auto &t : g.initializer())
    inits.insert(t.name());
  // A named dim that --batch or --seq binds at axis 0 or 1 is the same
  // symbol wherever else it appears (a [batch, seq, seq] mask input).
  std::map<std::string, std::pair<std::string, int64_t>> byName;
  for (const auto &input : g.input()) {
    if (inits.count(input.name()) || !input.type().has_tensor_type())
      continue;
    const auto &shape = input.type().tensor_type().shape();
    for (int axis = 0; axis < std::min(shape.dim_size(), 2); ++axis) {
      const auto &dim = shape.dim(axis);
      if (!dim.has_dim_param() || dim.dim_param().empty() ||
          options.dims.count(dim.dim_param()))
        continue;
      auto value = axis == 0 ? options.batch : options.seq;
      if (value)
        byName.emplace(dim.dim_param(),
                       std::make_pair(axis == 0 ? "--batch" : "--seq", *value));
    }
  }
  for (auto &input : *g.mutable_input()) {
    if (inits.count(input.name()) || !input.type().has_tensor_type())
      continue;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int axis = 0; axis < shape->dim_size(); ++axis) {
      auto *dim = shape->mutable_dim(axis);
      if (dim->has_dim_value())
        continue;
      std::string name = dim->has_dim_param() ? dim->dim_param() : "";
      std::optional<int64_t> value;
      std::string flag;
      auto it = options.dims.find(name);
      if (!name.empty() && it != options.dims.end()) {
        value = it->second;
        flag = "--dim=" + name;
      } else if (axis == 0 && options.batch) {
        value = options.batch;
        flag = "--batch";
      } else if (axis == 1 && options.seq) {
        value = options.seq;
        flag = "--seq";
      } else if (auto b = byName.find(name); b != byName.end()) {
        flag = b->second.first;
        value = b->second.second;
      }
      if (!value) {
        std::string shown = name.empty() ? "(unnamed)" : "'" + name + "'";
        std::string flag = axis == 0   ? "--batch=N"
                           : axis == 1 ? "--seq=N"
                                       : "--dim=" + (name.empty() ? std::string("NAME") : name) + "=N";
        return fail("symbolic dim " + shown + " of input '" + input.name() +
                    "' (axis " + std::to_string(axis) +
                    ") is not bound; pass " + flag);
      }
      if (*value <= 0)
        return fail("dim " + name + " of input '" + input.name() +
                    "' must be bound to a positive value");
      dim->clear_dim_param();
      dim->set_dim_value(*value);
      if (std::none_of(bindings.begin(), bindings.end(),
                       [&](const DimBinding &b) { return b.flag == flag; }))
        bindings.push_back({flag, *value});
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Inference + folding loop
//===----------------------------------------------------------------------===//

static bool isStatic(const onnx::TypeProto &t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape())
    return false;
  for (const auto &d : t.tensor_type().shape().dim())
    if (!d.has_dim_value())
      return false;
  return true;
}

static std::vector<int64_t> shapeOf(const onnx::TypeProto &t) {
  std::vector<int64_t> s;
  for (const auto &d : t.tensor_type().shape().dim())
    s.push_back(d.dim_value());
  return s;
}

static void collectTypes(const onnx::GraphProto &g, ResolvedGraph &r) {
  r.types.clear();
  for (const auto &v : g.input())
    r.types[v.name()] = v.type();
  for (const auto &v : g.value_info())
    r.types[v.name()] = v.type();
  for (const auto &v : g.output())
    r.types[v.name()] = v.type();
  for (const auto &t : g.initializer()) {
    onnx::TypeProto ty;
    ty.mutable_tensor_type()->set_elem_type(t.data_type());
    auto *shape = ty.mutable_tensor_type()->mutable_shape();
    for (int64_t d : t.dims())
      shape->add_dim()->set_dim_value(d);
    r.types[t.name()] = ty;
  }
}

/// Literal values of a Constant node, when small enough to fold.
static std::optional<ConstantTensor> constantNodeValue(const onnx::NodeProto &n) {
  for (const auto &a : n.attribute()) {
    if (a.name() == "value") {
      auto c = readTensorProto(a.t());
      // Large float constants are weights: they become params, not literals.
      if (c && c->isFloat() && c->numElements() > 16)
        return std::nullopt;
      return c;
    }
    ConstantTensor c;
    if (a.name() == "value_int" || a.name() == "value_ints") {
      c.dtype = TensorProto::INT64;
      if (a.name() == "value_int") {
        c.ints = {a.i()};
      } else {
        c.ints.assign(a.ints().begin(), a.ints().end());
        c.shape = {a.ints_size()};
      }
      return c;
    }
    if (a.name() == "value_float" || a.name() == "value_floats") {
      c.dtype = TensorProto::FLOAT;
      if (a.name() == "value_float") {
        c.floats = {a.f()};
      } else {
        c.floats.assign(a.floats().begin(), a.floats().end());
        c.shape = {a.floats_size()};
      }
      return c;
    }
  }
  return std::nullopt;
}

/// "node 'NAME' (Op)", or for an unnamed node "the Op node making 'OUT'".
static std::string describeFoldedNode(const onnx::NodeProto &n) {
  if (!n.name().empty())
    return "node '" + n.name() + "' (" + n.op_type() + ")";
  return "the " + n.op_type() + " node making '" +
         (n.output_size() ? n.output(0) : std::string()) + "'";
}

/// Folds what can be folded once; returns how many nodes left the graph.
static std::optional<ImportError> foldOnce(onnx::GraphProto &g, ResolvedGraph &r,
                                           int &removed) {
  removed = 0;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<std::pair<std::string, const ConstantTensor *>> newInits;
  for (auto &node : *g.mutable_node()) {
    std::optional<std::vector<ConstantTensor>> values;
    if (node.op_type() == "Constant" && node.domain().empty()) {
      if (auto c = constantNodeValue(node))
        values = std::vector<ConstantTensor>{*c};
    } else if ((node.op_type() == "Shape" || node.op_type() == "Size") &&
               node.input_size() == 1) {
      auto it = r.types.find(node.input(0));
      if (it != r.types.end() && isStatic(it->second)) {
        ConstantTensor proxy; // only its shape is read
        proxy.dtype = TensorProto::INT64;
        proxy.shape = shapeOf(it->second);
        proxy.splat = true;
        proxy.ints = {0};
        std::string err;
        values = evaluateNode(node, {&proxy}, err);
      }
    } else if (node.domain().empty() || node.domain() == "ai.onnx") {
      std::vector<const ConstantTensor *> ins;
      bool all = node.input_size() > 0;
      for (const auto &name : node.input()) {
        if (name.empty()) {
          ins.push_back(nullptr);
          continue;
        }
        auto it = r.constants.find(name);
        if (it == r.constants.end()) {
          all = false;
          break;
        }
        ins.push_back(&it->second);
      }
      if (all) {
        std::string err;
        values = evaluateNode(node, ins, err);
        if (!err.empty())
          return fail(describeFoldedNode(node) + ": " + err);
      }
    }
    // A result whose value vector does not match its type and shape (the
    // evaluator on an input it does not fully handle; fuzzer-found) is not
    // folded: later folds and writeTensorProto would read past it.
    // A node listing more outputs than its op gives (fuzzer-found: "b, =
    // Gather(...)"): empty names are absent outputs, so they are skipped;
    // a named one no op here produces is an error.
    if (values)
      for (int i = values->size(); i < node.output_size(); ++i)
        if (!node.output(i).empty())
          return fail(describeFoldedNode(node) + ": lists " +
                      std::to_string(node.output_size()) +
                      " outputs, but the op gives " +
                      std::to_string(values->size()) +
                      "; the model is corrupt; re-export it");
    if (values)
      for (const auto &v : *values)
        if (!v.holdsAllValues()) {
          values.reset();
          break;
        }
    bool fits = values.has_value();
    if (values) {
      for (int i = 0; i < node.output_size() && i < (int)values->size(); ++i)
        if (!node.output(i).empty())
          r.constants[node.output(i)] = (*values)[i];
      for (const auto &v : *values)
        fits &= v.numElements() <= kMaxDenseFoldElements;
    }
    if (!fits) { // big splat fills stay nodes so inference still sees them
      *kept.Add() = std::move(node);
      continue;
    }
    ++removed;
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty())
        newInits.push_back({node.output(i), &r.constants[node.output(i)]});
  }
  g.mutable_node()->Swap(&kept);
  for (auto &[name, value] : newInits)
    writeTensorProto(*value, name, *g.add_initializer());
  return std::nullopt;
}

std::optional<ImportError> resolveShapes(LoadedModel &m,
                                         const OnnxImportOptions &options,
                                         ResolvedGraph &out) {
  onnx::GraphProto &g = *m.model.mutable_graph();
  if (auto err = bindInputDims(g, options, out.bindings))
    return err;
  // Sizes first: nothing below (nor ONNX inference) multiplies unchecked.
  if (auto err = checkDeclaredSizes(g))
    return err;
  // Before IR version 4 every initializer had to be a graph input too; ONNX
  // shape inference of such a model dereferences the missing input's type
  // (a fuzzer-found SEGV), so the rule is checked here.
  if (m.model.ir_version() < 4) {
    std::set<std::string> inputs;
    for (const auto &in : g.input())
      inputs.insert(in.name());
    for (const auto &t : g.initializer())
      if (!inputs.count(t.name()))
        return fail("initializer '" + t.name() + "' is not a graph input, "
                    "which IR version " + std::to_string(m.model.ir_version()) +
                    " requires; re-export with ir_version >= 4");
  }
  // Small inline integer initializers are shape data (ids, axes): fold them.
  for (const auto &t : g.initializer())
    if (!isFloatType(t.data_type()) && t.data_location() != TensorProto::EXTERNAL) {
      int64_t n = checkedElements(t.dims()).value_or(INT64_MAX);
      if (n <= kMaxDenseFoldElements)
        if (auto c = readTensorProto(t))
          out.constants[t.name()] = *c;
    }

  // No data propagation: ONNX 1.12's dereferences the missing type of a
  // tensor whose producer failed inference (a fuzzer-found SEGV: a Slice
  // with an out-of-range axis feeding a Shape). The host folding below
  // computes what it would, for every export here.
  onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1,
                                   /*data_prop=*/false);
  for (int iter = 0; iter < 64; ++iter) {
    // Inference merges with what is already recorded, so a dim left
    // symbolic by an earlier round would stick: start each round clean.
    g.clear_value_info();
    for (auto &o : *g.mutable_output())
      if (o.type().has_tensor_type())
        o.mutable_type()->mutable_tensor_type()->clear_shape();
    try {
      onnx::shape_inference::InferShapes(m.model,
                                         onnx::OpSchemaRegistry::Instance(), opts);
    } catch (const std::exception &e) {
      return fail(explainInferenceFailure(e.what(), g, out));
    }
    collectTypes(g, out);
    int removed = 0;
    if (auto err = foldOnce(g, out, removed))
      return err;
    if (removed == 0)
      break;
  }

  if (auto err = checkInferredSizes(g, out))
    return err;
  if (auto err = checkGatherRanges(g, out))
    return err;
  for (const auto &t : g.initializer())
    out.initializers[t.name()] = &t;
  for (const auto &node : g.node())
    for (const auto &o : node.output()) {
      if (o.empty() || out.constants.count(o))
        continue;
      auto it = out.types.find(o);
      if (it == out.types.end() || !isStatic(it->second))
        return fail("could not infer a static shape for tensor '" + o +
                    "' (output of node '" + node.name() + "', " +
                    node.op_type() +
                    "); bind the model's symbolic dims with --batch, --seq or "
                    "--dim=NAME=VALUE");
    }
  return std::nullopt;
}

} // namespace frenzy::import
