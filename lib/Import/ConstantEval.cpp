//===- ConstantEval.cpp - fold shape-computing ONNX nodes on the host -----===//
//
// Only what exporters use to compute shapes, positions and mask fills is
// supported; anything else stays an op in the imported graph.
//
//===----------------------------------------------------------------------===//
#include "ConstantTensor.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace frenzy::import {
using onnx::TensorProto;

namespace {
using Inputs = std::vector<const ConstantTensor *>;
using Result = std::optional<std::vector<ConstantTensor>>;

const onnx::AttributeProto *findAttr(const onnx::NodeProto &n,
                                     const char *name) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto &n, const char *name, int64_t dflt) {
  const auto *a = findAttr(n, name);
  return a ? a->i() : dflt;
}

std::vector<int64_t> strides(const std::vector<int64_t> &shape) {
  // Saturating: a splat's shape is not bounded by the fold limit, and its
  // strides are computed though never used to index.
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    s[i] = saturatingMul(s[i + 1], shape[i + 1]);
  return s;
}

bool broadcastShapes(const std::vector<std::vector<int64_t>> &shapes,
                     std::vector<int64_t> &out) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  out.assign(rank, 1);
  for (const auto &s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[rank - s.size() + i];
      if (s[i] == o || s[i] == 1)
        continue;
      if (o != 1)
        return false;
      o = s[i];
    }
  return true;
}

/// Strides of `in` seen through an output of rank `outRank`: 0 along
/// broadcast dims (and everywhere for a splat), so a flat input index is
/// the dot product of output coordinates with these strides.
std::vector<int64_t> broadcastStrides(const ConstantTensor &in, size_t outRank) {
  std::vector<int64_t> b(outRank, 0);
  if (in.splat)
    return b;
  std::vector<int64_t> inStrides = strides(in.shape);
  size_t off = outRank - in.shape.size();
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (in.shape[d] != 1)
      b[off + d] = inStrides[d];
  return b;
}

/// Applies `f` elementwise with broadcasting. Results of all-splat inputs
/// stay splat; dense results over the fold limit are refused.
std::optional<ConstantTensor>
elementwise(const Inputs &in, int32_t outType,
            const std::function<double(const std::vector<double> &)> &ff,
            const std::function<int64_t(const std::vector<int64_t> &)> &fi,
            bool computeInFloat, std::string &error) {
  std::vector<std::vector<int64_t>> shapes;
  bool allSplat = true;
  for (const auto *c : in) {
    shapes.push_back(c->shape);
    allSplat &= c->splat || c->numElements() == 1;
  }
  ConstantTensor r;
  r.dtype = outType;
  if (!broadcastShapes(shapes, r.shape)) {
    error = "operand shapes do not broadcast";
    return std::nullopt;
  }
  int64_t n = r.numElements();
  r.splat = allSplat && n > 1;
  if (!r.splat && n > kMaxDenseFoldElements)
    return std::nullopt;
  int64_t count = r.splat ? 1 : n;
  std::vector<int64_t> outStrides = strides(r.shape);
  std::vector<std::vector<int64_t>> inStrides;
  for (const auto *c : in)
    inStrides.push_back(broadcastStrides(*c, r.shape.size()));
  std::vector<double> fv(in.size());
  std::vector<int64_t> iv(in.size());
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      int64_t j = 0;
      for (size_t d = 0; d < r.shape.size(); ++d)
        j += (i / outStrides[d]) % r.shape[d] * inStrides[k][d];
      fv[k] = in[k]->valueAt(j);
      iv[k] = in[k]->isFloat() ? saturatingInt(in[k]->floatAt(j))
                               : in[k]->intAt(j);
    }
    if (isFloatType(outType))
      r.floats.push_back(computeInFloat ? ff(fv) : double(fi(iv)));
    else
      r.ints.push_back(computeInFloat ? saturatingInt(ff(fv)) : fi(iv));
  }
  return r;
}

int64_t normAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

std::optional<ConstantTensor> gather(const onnx::NodeProto &node,
                                     const ConstantTensor &data,
                                     const ConstantTensor &idx,
                                     std::string &error) {
  int64_t rank = data.shape.size();
  int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
  if (axis < 0 || axis >= rank) {
    error = "Gather axis out of range";
    return std::nullopt;
  }
  ConstantTensor r;
  r.dtype = data.dtype;
  r.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  r.shape.insert(r.shape.end(), idx.shape.begin(), idx.shape.end());
  r.shape.insert(r.shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t n = r.numElements();
  if (n > kMaxDenseFoldElements)
    return std::nullopt;
  // Empty indices: nothing to read, and the loops below would still walk
  // every outer row of data (a splat's can be 2^40).
  if (n == 0)
    return r;
  std::optional<std::vector<int64_t>> ids = idx.toInts();
  if (!ids)
    return std::nullopt;
  // Each factor is at least 1 and their product is n: no overflow.
  int64_t outer = 1, inner = 1, dim = data.shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= data.shape[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    inner *= data.shape[i];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : *ids) {
      if (k < 0)
        k += dim;
      if (k < 0 || k >= dim) {
        error = "Gather index out of range";
        return std::nullopt;
      }
      for (int64_t i = 0; i < inner; ++i) {
        int64_t src = (o * dim + k) * inner + i;
        if (r.isFloat())
          r.floats.push_back(data.floatAt(src));
        else
          r.ints.push_back(data.intAt(src));
      }
    }
  return r;
}

std::optional<ConstantTensor> slice(const ConstantTensor &data,
                                    const Inputs &in) {
  int64_t rank = data.shape.size();
  auto starts = in[1]->toInts(), ends = in[2]->toInts();
  if (!starts || !ends || starts->size() != ends->size())
    return std::nullopt;
  std::optional<std::vector<int64_t>> axes, steps;
  if (in.size() > 3 && in[3])
    axes = in[3]->toInts();
  else
    for (axes.emplace(); axes->size() < starts->size();)
      axes->push_back(axes->size());
  if (in.size() > 4 && in[4])
    steps = in[4]->toInts();
  else
    steps.emplace(starts->size(), 1);
  // Malformed operands are left to ONNX inference, which names the node.
  if (!axes || !steps || axes->size() != starts->size() ||
      steps->size() != starts->size())
    return std::nullopt;
  std::vector<int64_t> b(rank, 0), st(rank, 1), outShape = data.shape;
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t a = normAxis((*axes)[i], rank);
    if (a < 0 || a >= rank || data.shape[a] < 0)
      return std::nullopt;
    int64_t dim = data.shape[a];
    int64_t s = (*starts)[i], e = (*ends)[i], step = (*steps)[i];
    if (step == 0)
      return std::nullopt;
    // A step longer than the axis takes at most one element; clamping it
    // keeps the arithmetic below from overflowing.
    step = std::clamp<int64_t>(step, -dim - 1, dim + 1);
    s = s < 0 ? s + dim : s;
    e = e < 0 ? e + dim : e;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      outShape[a] = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      if (dim == 0) { // nothing to take, and [0, dim - 1] is empty
        outShape[a] = 0;
        continue;
      }
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      outShape[a] = s > e ? (s - e - 1) / -step + 1 : 0;
    }
    b[a] = s;
    st[a] = step;
  }
  ConstantTensor r;
  r.dtype = data.dtype;
  r.shape = outShape;
  int64_t n = r.numElements();
  if (data.splat && n > 1) {
    r.splat = true;
    r.floats = data.floats;
    r.ints = data.ints;
    return r;
  }
  if (n > kMaxDenseFoldElements)
    return std::nullopt;
  std::vector<int64_t> os = strides(outShape), is = strides(data.shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (b[d] + ((i / os[d]) % outShape[d]) * st[d]) * is[d];
    if (r.isFloat())
      r.floats.push_back(data.floatAt(src));
    else
      r.ints.push_back(data.intAt(src));
  }
  return r;
}
} // namespace

std::optional<std::vector<ConstantTensor>>
evaluateNode(const onnx::NodeProto &node, const Inputs &in,
             std::string &error) {
  const std::string &op = node.op_type();
  auto one = [](std::optional<ConstantTensor> c) -> Result {
    if (!c)
      return std::nullopt;
    return std::vector<ConstantTensor>{std::move(*c)};
  };
  auto need = [&](size_t n) {
    if (in.size() < n)
      return false;
    for (size_t i = 0; i < n; ++i)
      if (!in[i])
        return false;
    return true;
  };
  using F = std::vector<double>;
  using I = std::vector<int64_t>;

  if (op == "Identity" && need(1))
    return one(*in[0]);
  if (op == "Shape" && need(1)) {
    int64_t rank = in[0]->shape.size();
    int64_t s = std::clamp<int64_t>(normAxis(intAttr(node, "start", 0), rank), 0, rank);
    int64_t e = std::clamp<int64_t>(normAxis(intAttr(node, "end", rank), rank), 0, rank);
    return one(ConstantTensor::vectorInts(
        I(in[0]->shape.begin() + s, in[0]->shape.begin() + std::max(s, e))));
  }
  if (op == "Size" && need(1))
    return one(ConstantTensor::scalarInt(in[0]->numElements(), TensorProto::INT64));
  if (op == "Gather" && need(2))
    return one(gather(node, *in[0], *in[1], error));
  if (op == "Slice" && need(3))
    return one(slice(*in[0], in));
  if ((op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
       op == "Flatten") && need(1)) {
    ConstantTensor r = *in[0];
    int64_t rank = r.shape.size();
    if (op == "Reshape") {
      if (!need(2))
        return std::nullopt;
      std::optional<I> target = in[1]->toInts();
      if (!target)
        return std::nullopt;
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < target->size(); ++i) {
        int64_t &t = (*target)[i];
        if (t == 0 && !intAttr(node, "allowzero", 0)) {
          if (int64_t(i) >= rank) // copies a dim the input lacks
            return std::nullopt;
          t = r.shape[i];
        }
        // Two -1 entries or another negative: ONNX inference says which.
        if (t < -1 || (t == -1 && infer >= 0))
          return std::nullopt;
        if (t == -1)
          infer = i;
        else
          known = saturatingMul(known, t);
      }
      if (infer >= 0)
        (*target)[infer] = known ? in[0]->numElements() / known : 0;
      r.shape = *target;
    } else if (op == "Flatten") {
      int64_t axis = normAxis(intAttr(node, "axis", 1), rank), a = 1;
      if (axis < 0 || axis > rank)
        return std::nullopt;
      for (int64_t i = 0; i < axis; ++i)
        a = saturatingMul(a, r.shape[i]);
      r.shape = {a, in[0]->numElements() / std::max<int64_t>(a, 1)};
    } else {
      I axes;
      if (in.size() > 1 && in[1]) {
        std::optional<I> given = in[1]->toInts();
        if (!given)
          return std::nullopt;
        axes = *given;
      } else if (const auto *a = findAttr(node, "axes")) {
        axes.assign(a->ints().begin(), a->ints().end());
      }
      if (op == "Unsqueeze") {
        int64_t outRank = rank + axes.size();
        for (int64_t &a : axes) {
          a = normAxis(a, outRank);
          if (a < 0 || a >= outRank) // left to inference, which names it
            return std::nullopt;
        }
        std::sort(axes.begin(), axes.end());
        if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
          return std::nullopt;
        for (int64_t a : axes)
          r.shape.insert(r.shape.begin() + std::min<int64_t>(a, r.shape.size()), 1);
      } else {
        std::vector<int64_t> kept;
        for (int64_t i = 0; i < rank; ++i) {
          bool drop = axes.empty() ? r.shape[i] == 1
                                   : std::count_if(axes.begin(), axes.end(),
                                                   [&](int64_t a) {
                                                     return normAxis(a, rank) == i;
                                                   });
          if (!drop)
            kept.push_back(r.shape[i]);
        }
        r.shape = kept;
      }
    }
    if (r.numElements() != in[0]->numElements()) {
      error = "reshape changes the element count";
      return std::nullopt;
    }
    return one(r);
  }
  if (op == "Concat" && !in.empty()) {
    if (!need(in.size()))
      return std::nullopt;
    int64_t rank = in[0]->shape.size();
    int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
    if (rank != 1 || axis != 0) // shape vectors only
      return std::nullopt;
    ConstantTensor r;
    r.dtype = in[0]->dtype;
    for (const auto *c : in) {
      // ONNX Concat takes one element type; a float input has no ints to
      // read, and ONNX inference lets int64 with int32 through.
      if (c && c->dtype != r.dtype) {
        error = "inputs of different element types; ONNX Concat takes one "
                "type (insert a Cast)";
        return std::nullopt;
      }
      // Other ranks are not a shape vector: leave the node to inference.
      if (!c || c->shape.size() != 1)
        return std::nullopt;
      for (int64_t i = 0; i < c->numElements(); ++i) {
        if (r.isFloat())
          r.floats.push_back(c->floatAt(i));
        else
          r.ints.push_back(c->intAt(i));
      }
    }
    r.shape = {int64_t(r.isFloat() ? r.floats.size() : r.ints.size())};
    return one(r);
  }
  if (op == "Range" && need(3)) {
    ConstantTensor r;
    r.dtype = in[0]->dtype;
    auto s = in[0]->firstValue(), l = in[1]->firstValue(),
         d = in[2]->firstValue();
    if (!s || !l || !d) // empty bounds: inference names the node
      return std::nullopt;
    if (*d == 0) {
      error = "Range delta is zero";
      return std::nullopt;
    }
    // The count in double (NaN, inf and 1e300 included), then bounded.
    double count = std::ceil((*l - *s) / *d);
    if (!(count > 0))
      count = 0;
    if (count > kMaxDenseFoldElements)
      return std::nullopt;
    int64_t n = int64_t(count);
    r.shape = {n};
    int64_t si = in[0]->isFloat() ? saturatingInt(*s) : in[0]->intAt(0);
    int64_t di = in[2]->isFloat() ? saturatingInt(*d) : in[2]->intAt(0);
    for (int64_t i = 0; i < n; ++i) {
      if (r.isFloat())
        r.floats.push_back(*s + i * *d);
      else
        r.ints.push_back(wrappingAdd(si, wrappingMul(i, di)));
    }
    return one(r);
  }
  if ((op == "ConstantOfShape" || op == "Expand") && need(op == "Expand" ? 2 : 1)) {
    ConstantTensor r;
    std::optional<I> given =
        op == "Expand" ? in[1]->toInts() : in[0]->toInts();
    if (!given)
      return std::nullopt;
    I shape = *given;
    if (op == "ConstantOfShape") {
      r.dtype = TensorProto::FLOAT;
      r.floats = {0.0};
      if (const auto *a = findAttr(node, "value"))
        if (auto v = readTensorProto(a->t())) {
          r.dtype = v->dtype;
          r.floats = v->floats;
          r.ints = v->ints;
        }
      r.shape = shape;
      r.splat = r.numElements() != 1;
      if (r.numElements() == 0)
        return std::nullopt;
      return one(r);
    }
    // Expand is broadcasting of the input against the given shape.
    ConstantTensor target;
    target.dtype = in[0]->dtype;
    target.shape = shape;
    target.splat = true;
    target.floats = {0.0};
    target.ints = {0};
    return one(elementwise(
        {in[0], &target}, in[0]->dtype, [](const F &v) { return v[0]; },
        [](const I &v) { return v[0]; }, in[0]->isFloat(), error));
  }
  if (op == "Cast" && need(1)) {
    int32_t to = intAttr(node, "to", TensorProto::FLOAT);
    bool toBool = to == TensorProto::BOOL;
    return one(elementwise(
        {in[0]}, to, [&](const F &v) { return toBool ? v[0] != 0 : v[0]; },
        [&](const I &v) { return toBool ? int64_t(v[0] != 0) : v[0]; },
        in[0]->isFloat(), error));
  }
  if (op == "Where" && need(3)) {
    int32_t t = in[1]->dtype;
    return one(elementwise(
        {in[0], in[1], in[2]}, t,
        [](const F &v) { return v[0] != 0 ? v[1] : v[2]; },
        [](const I &v) { return v[0] != 0 ? v[1] : v[2]; }, isFloatType(t),
        error));
  }

  struct Binary {
    const char *name;
    double (*f)(double, double);
    int64_t (*i)(int64_t, int64_t);
    bool compare;
  };
  static const Binary binaries[] = {
      // Integer results wrap as in the ONNX runtimes; INT64_MIN / -1 (a
      // trap on x86) gives INT64_MIN, and x % -1 is 0.
      {"Add", [](double a, double b) { return a + b; }, wrappingAdd, false},
      {"Sub", [](double a, double b) { return a - b; }, wrappingSub, false},
      {"Mul", [](double a, double b) { return a * b; }, wrappingMul, false},
      {"Div", [](double a, double b) { return a / b; },
       [](int64_t a, int64_t b) -> int64_t {
         return b == 0 ? 0 : b == -1 ? wrappingSub(0, a) : a / b;
       },
       false},
      {"Mod", [](double a, double b) { return std::fmod(a, b); },
       [](int64_t a, int64_t b) -> int64_t {
         return b == 0 || b == -1 ? 0 : a % b;
       },
       false},
      {"Pow", [](double a, double b) { return std::pow(a, b); },
       [](int64_t a, int64_t b) {
         return saturatingInt(std::pow(double(a), double(b)));
       },
       false},
      {"Max", [](double a, double b) { return std::max(a, b); },
       [](int64_t a, int64_t b) { return std::max(a, b); }, false},
      {"Min", [](double a, double b) { return std::min(a, b); },
       [](int64_t a, int64_t b) { return std::min(a, b); }, false},
      {"Equal", [](double a, double b) { return double(a == b); },
       [](int64_t a, int64_t b) { return int64_t(a == b); }, true},
      {"Less", [](double a, double b) { return double(a < b); },
       [](int64_t a, int64_t b) { return int64_t(a < b); }, true},
      {"LessOrEqual", [](double a, double b) { return double(a <= b); },
       [](int64_t a, int64_t b) { return int64_t(a <= b); }, true},
      {"Greater", [](double a, double b) { return double(a > b); },
       [](int64_t a, int64_t b) { return int64_t(a > b); }, true},
      {"GreaterOrEqual", [](double a, double b) { return double(a >= b); },
       [](int64_t a, int64_t b) { return int64_t(a >= b); }, true},
      {"And", [](double a, double b) { return double(a && b); },
       [](int64_t a, int64_t b) { return int64_t(a && b); }, false},
      {"Or", [](double a, double b) { return double(a || b); },
       [](int64_t a, int64_t b) { return int64_t(a || b); }, false},
  };
  for (const Binary &b : binaries) {
    if (op != b.name || !need(2))
      continue;
    bool useFloat = in[0]->isFloat() || in[1]->isFloat();
    int32_t t = b.compare ? TensorProto::BOOL : in[0]->dtype;
    auto f = b.f;
    auto i = b.i;
    return one(elementwise(
        {in[0], in[1]}, t, [f](const F &v) { return f(v[0], v[1]); },
        [i](const I &v) { return i(v[0], v[1]); }, useFloat, error));
  }

  struct Unary {
    const char *name;
    double (*f)(double);
  };
  static const Unary unaries[] = {
      {"Neg", [](double a) { return -a; }},
      {"Abs", [](double a) { return std::fabs(a); }},
      {"Sqrt", [](double a) { return std::sqrt(a); }},
      {"Reciprocal", [](double a) { return 1.0 / a; }},
      {"Floor", [](double a) { return std::floor(a); }},
      {"Ceil", [](double a) { return std::ceil(a); }},
      {"Not", [](double a) { return double(a == 0); }},
  };
  for (const Unary &u : unaries) {
    if (op != u.name || !need(1))
      continue;
    auto f = u.f;
    return one(elementwise(
        {in[0]}, in[0]->dtype, [f](const F &v) { return f(v[0]); },
        [f](const I &v) { return saturatingInt(f(double(v[0]))); }, true,
        error));
  }
  return std::nullopt;
}
} // namespace frenzy::import
