//===- ShapeLimits.cpp - sizes a model may have, and why a dim does not fit ===//
#include "ShapeLimits.h"

#include <algorithm>

namespace frenzy::import {
using onnx::TensorProto;

static std::string shapeText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

template <typename Range>
static std::vector<int64_t> toVector(const Range &dims) {
  return std::vector<int64_t>(dims.begin(), dims.end());
}

/// "node 'NAME' (Op)", or for an unnamed node "the Op node making 'OUT'".
static std::string nodeText(const onnx::NodeProto &n) {
  if (!n.name().empty())
    return "node '" + n.name() + "' (" + n.op_type() + ")";
  return "the " + n.op_type() + " node making '" +
         (n.output_size() ? n.output(0) : std::string()) + "'";
}

static std::string tooLarge(const std::string &what,
                            const std::vector<int64_t> &dims,
                            const std::string &todo) {
  bool negative = std::any_of(dims.begin(), dims.end(),
                              [](int64_t d) { return d < 0; });
  return what + " has shape " + shapeText(dims) +
         (negative ? ", with a negative dim"
                   : ", more than the limit of 2^44 elements per tensor") +
         "; " + todo;
}

/// Bytes per element of inline data, 0 for types the importer never reads.
static int64_t elementWidth(int32_t dtype) {
  switch (dtype) {
  case TensorProto::DOUBLE:
  case TensorProto::INT64:
  case TensorProto::UINT64:
    return 8;
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
  case TensorProto::INT16:
  case TensorProto::UINT16:
    return 2;
  case TensorProto::INT8:
  case TensorProto::UINT8:
  case TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// How many values the typed (non-raw) fields of `t` hold.
static int64_t typedValueCount(const TensorProto &t) {
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    return t.float_data_size();
  case TensorProto::DOUBLE:
    return t.double_data_size();
  case TensorProto::INT64:
    return t.int64_data_size();
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return t.uint64_data_size();
  default:
    return t.int32_data_size();
  }
}

/// A tensor stored in the file: its size, and inline data of that size.
static std::optional<ImportError> checkStoredTensor(const TensorProto &t,
                                                    const std::string &what) {
  auto n = checkedElements(t.dims());
  if (!n)
    return ImportError{tooLarge(what, toVector(t.dims()),
                                "the file is corrupt; re-export the model")};
  int64_t width = elementWidth(t.data_type());
  if (t.data_location() == TensorProto::EXTERNAL || width == 0)
    return std::nullopt;
  int64_t have = t.has_raw_data() ? int64_t(t.raw_data().size())
                                  : typedValueCount(t) * width;
  if (have != *n * width)
    return ImportError{what + " has shape " + shapeText(toVector(t.dims())) +
                       " (" + std::to_string(*n * width) +
                       " bytes) but holds " + std::to_string(have) +
                       " bytes of data; the file is corrupt; re-export the "
                       "model"};
  return std::nullopt;
}

std::optional<ImportError> checkDeclaredSizes(const onnx::GraphProto &g) {
  for (const auto &t : g.initializer())
    if (auto e = checkStoredTensor(t, "initializer '" + t.name() + "'"))
      return e;
  for (const auto &n : g.node())
    for (const auto &a : n.attribute())
      if (a.has_t())
        if (auto e = checkStoredTensor(a.t(), "the tensor of " + nodeText(n)))
          return e;
  for (const auto &in : g.input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
      continue;
    std::vector<int64_t> dims;
    bool symbolic = false;
    for (const auto &d : in.type().tensor_type().shape().dim()) {
      symbolic |= !d.has_dim_value();
      dims.push_back(d.dim_value());
    }
    if (!symbolic && !checkedElements(dims))
      return ImportError{tooLarge("input '" + in.name() + "'", dims,
                                  "bind smaller --batch, --seq or --dim "
                                  "values")};
  }
  return std::nullopt;
}

std::optional<ImportError> checkInferredSizes(const onnx::GraphProto &g,
                                              const ResolvedGraph &r) {
  for (const auto &n : g.node())
    for (const auto &o : n.output()) {
      auto it = r.types.find(o);
      if (it == r.types.end() || !it->second.has_tensor_type())
        continue;
      std::vector<int64_t> dims;
      for (const auto &d : it->second.tensor_type().shape().dim())
        dims.push_back(d.dim_value());
      if (!checkedElements(dims))
        return ImportError{tooLarge("tensor '" + o + "' (output of " +
                                        nodeText(n) + ")",
                                    dims,
                                    "bind smaller --batch, --seq or --dim "
                                    "values")};
    }
  return std::nullopt;
}

/// The static shape recorded for a tensor, or empty.
static std::optional<std::vector<int64_t>> knownShape(const ResolvedGraph &r,
                                                      const std::string &name) {
  if (auto c = r.constants.find(name); c != r.constants.end())
    return c->second.shape;
  auto it = r.types.find(name);
  if (it == r.types.end() || !it->second.has_tensor_type() ||
      !it->second.tensor_type().has_shape())
    return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto &d : it->second.tensor_type().shape().dim()) {
    if (!d.has_dim_value())
      return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

/// "initializer 'NAME'" or "tensor 'NAME'": where a limit comes from.
static std::string tableName(const onnx::GraphProto &g,
                             const std::string &name) {
  for (const auto &t : g.initializer())
    if (t.name() == name)
      return "initializer '" + name + "'";
  for (const auto &in : g.input())
    if (in.name() == name)
      return "input '" + name + "'";
  return "tensor '" + name + "'";
}

/// The command-line bindings whose value is `value`. When several flags
/// have it, --batch is dropped first: batch never indexes a model's tables.
static std::vector<const DimBinding *> bindingsOf(const ResolvedGraph &r,
                                                  int64_t value) {
  std::vector<const DimBinding *> found;
  for (const DimBinding &b : r.bindings)
    if (b.value == value)
      found.push_back(&b);
  if (found.size() > 1)
    found.erase(std::remove_if(found.begin(), found.end(),
                               [](const DimBinding *b) {
                                 return b->flag == "--batch";
                               }),
                found.end());
  return found;
}

/// "--seq=N is beyond what the model allows: WHERE; use --seq=N with N at
/// most LIMIT", naming every flag that could have asked for it.
static std::string beyondLimit(const std::vector<const DimBinding *> &flags,
                               int64_t limit, const std::string &where) {
  std::string given, fix;
  for (const DimBinding *b : flags) {
    given += (given.empty() ? "" : " or ") + b->flag + "=" +
             std::to_string(b->value);
    fix += (fix.empty() ? "" : " or ") + b->flag + "=N";
  }
  return given + " is beyond what the model allows: " + where + "; use " +
         fix + " with N at most " + std::to_string(limit);
}

static int64_t intAttribute(const onnx::NodeProto &n, const char *name,
                            int64_t fallback) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return a.i();
  return fallback;
}

std::optional<ImportError> checkGatherRanges(const onnx::GraphProto &g,
                                             const ResolvedGraph &r) {
  for (const auto &n : g.node()) {
    if (n.op_type() != "Gather" || n.input_size() < 2)
      continue;
    auto idx = r.constants.find(n.input(1));
    auto shape = knownShape(r, n.input(0));
    if (idx == r.constants.end() || !shape || shape->empty() ||
        idx->second.isFloat())
      continue;
    int64_t rank = int64_t(shape->size());
    int64_t axis = intAttribute(n, "axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank)
      continue; // the emitter reports a bad axis
    int64_t rows = (*shape)[axis];
    const ConstantTensor &c = idx->second;
    int64_t count = c.splat ? 1 : int64_t(c.ints.size());
    int64_t worst = 0;
    bool bad = false;
    for (int64_t i = 0; i < count; ++i) {
      int64_t k = c.ints[i];
      if (k >= rows || k < -rows) {
        worst = bad ? std::max(worst, k) : k;
        bad = true;
      }
    }
    if (!bad)
      continue;
    std::string where = tableName(g, n.input(0)) + " has " +
                        std::to_string(rows) + " rows along axis " +
                        std::to_string(axis) + " and " + nodeText(n) +
                        " reads row " + std::to_string(worst);
    // worst + 1 is the length a flag would have asked for (INT64_MAX, from
    // a file, has none).
    auto flags = worst >= rows && worst < INT64_MAX
                     ? bindingsOf(r, worst + 1)
                     : std::vector<const DimBinding *>{};
    if (!flags.empty())
      return ImportError{beyondLimit(flags, rows, where)};
    return ImportError{where + ", past its end; the model is inconsistent"};
  }
  return std::nullopt;
}

/// A Slice that cut a table short of a bound length: `x[:T]` on a buffer
/// with fewer than T rows, which ONNX (like PyTorch) clamps silently.
static std::optional<std::string> clampedSlice(const onnx::GraphProto &g,
                                               const ResolvedGraph &r) {
  for (const auto &n : g.node()) {
    if (n.op_type() != "Slice" || n.input_size() < 3)
      continue;
    auto shape = knownShape(r, n.input(0));
    auto ends = r.constants.find(n.input(2));
    if (!shape || ends == r.constants.end() || ends->second.isFloat() ||
        ends->second.splat)
      continue;
    std::vector<int64_t> axes;
    if (n.input_size() > 3 && !n.input(3).empty()) {
      auto a = r.constants.find(n.input(3));
      if (a == r.constants.end() || a->second.isFloat() || a->second.splat)
        continue;
      axes = a->second.ints;
    } else {
      for (size_t i = 0; i < ends->second.ints.size(); ++i)
        axes.push_back(int64_t(i));
    }
    int64_t rank = int64_t(shape->size());
    for (size_t i = 0; i < axes.size() && i < ends->second.ints.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      int64_t end = ends->second.ints[i];
      if (axis < 0 || axis >= rank || end <= (*shape)[axis])
        continue;
      auto flags = bindingsOf(r, end);
      if (!flags.empty())
        return beyondLimit(flags, (*shape)[axis],
                           tableName(g, n.input(0)) + " has " +
                               std::to_string((*shape)[axis]) +
                               " along axis " + std::to_string(axis) +
                               " and " + nodeText(n) + " takes the first " +
                               std::to_string(end));
    }
  }
  return std::nullopt;
}

std::string explainInferenceFailure(const std::string &what,
                                    const onnx::GraphProto &g,
                                    const ResolvedGraph &r) {
  if (auto e = checkGatherRanges(g, r))
    return e->message;
  if (auto s = clampedSlice(g, r))
    return *s;
  // The library lists every failing node as "(op_type:T, node name: N): M";
  // most after the first are its consequences ("Input 0 expected to have
  // type but instead is null").
  std::string text = what;
  std::replace(text.begin(), text.end(), '\n', ' ');
  const std::string marker = "(op_type:";
  size_t first = text.find(marker);
  if (first == std::string::npos)
    return "ONNX shape inference failed: " + text.substr(0, 400);
  size_t next = text.find(marker, first + 1);
  int64_t further = 0;
  for (size_t p = next; p != std::string::npos; p = text.find(marker, p + 1))
    ++further;
  std::string cause = text.substr(
      first, next == std::string::npos ? std::string::npos : next - first);
  // "[ShapeInferenceError] " tags repeat what the line already says.
  for (size_t p; (p = cause.find("[ShapeInferenceError] ")) != std::string::npos;)
    cause.erase(p, 22);
  for (size_t p; (p = cause.find("[TypeInferenceError] ")) != std::string::npos;)
    cause.erase(p, 21);
  while (!cause.empty() && cause.back() == ' ')
    cause.pop_back();
  // "(op_type:T, node name: N): M" -> "node 'N' (T): M".
  size_t close = cause.find("): ");
  if (close != std::string::npos) {
    std::string head = cause.substr(marker.size(), close - marker.size());
    std::string message = cause.substr(close + 3);
    size_t comma = head.find(", node name: ");
    std::string op = head.substr(0, comma);
    std::string node =
        comma == std::string::npos ? "" : head.substr(comma + 13);
    cause = (node.empty() ? "a " + op + " node" : "node '" + node + "' (" + op + ")") +
            ": " + message;
  }
  if (cause.size() > 400)
    cause = cause.substr(0, 400) + "...";
  std::string line = "ONNX shape inference failed: " + cause;
  if (further)
    line += " (and " + std::to_string(further) + " further error" +
            (further > 1 ? "s" : "") + ", most of them its consequences)";
  return line + "; check the bound dims (--batch, --seq, --dim) against the "
                "model";
}

} // namespace frenzy::import
