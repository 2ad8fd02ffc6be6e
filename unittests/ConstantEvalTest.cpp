//===- ConstantEvalTest.cpp - host folding of shape-computing ONNX ops ----===//
#include "ConstantTensor.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

using namespace frenzy::import;
using onnx::TensorProto;

namespace {
onnx::NodeProto node(const std::string &op) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name("/test/" + op);
  return n;
}

void addIntAttr(onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

ConstantTensor eval1(const onnx::NodeProto &n,
                     std::vector<const ConstantTensor *> in) {
  std::string err;
  auto r = evaluateNode(n, in, err);
  EXPECT_TRUE(err.empty()) << err;
  EXPECT_TRUE(r.has_value());
  return r ? r->front() : ConstantTensor{};
}
} // namespace

TEST(ConstantEval, ShapeGatherUnsqueezeConcat) {
  ConstantTensor x;
  x.dtype = TensorProto::FLOAT;
  x.shape = {2, 16, 64};
  x.splat = true;
  x.floats = {0};
  ConstantTensor shape = eval1(node("Shape"), {&x});
  EXPECT_EQ(shape.ints, (std::vector<int64_t>{2, 16, 64}));

  ConstantTensor idx = ConstantTensor::scalarInt(1, TensorProto::INT64);
  ConstantTensor t = eval1(node("Gather"), {&shape, &idx});
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.intAt(0), 16);

  ConstantTensor axes = ConstantTensor::vectorInts({0});
  ConstantTensor u = eval1(node("Unsqueeze"), {&t, &axes});
  EXPECT_EQ(u.shape, (std::vector<int64_t>{1}));

  ConstantTensor heads = ConstantTensor::vectorInts({4});
  ConstantTensor minus = ConstantTensor::vectorInts({-1});
  onnx::NodeProto concat = node("Concat");
  addIntAttr(concat, "axis", 0);
  ConstantTensor c = eval1(concat, {&u, &heads, &minus});
  EXPECT_EQ(c.ints, (std::vector<int64_t>{16, 4, -1}));
}

TEST(ConstantEval, RangeAndSlice) {
  ConstantTensor s = ConstantTensor::scalarInt(0, TensorProto::INT64);
  ConstantTensor l = ConstantTensor::scalarInt(6, TensorProto::INT64);
  ConstantTensor d = ConstantTensor::scalarInt(2, TensorProto::INT64);
  ConstantTensor r = eval1(node("Range"), {&s, &l, &d});
  EXPECT_EQ(r.ints, (std::vector<int64_t>{0, 2, 4}));

  ConstantTensor starts = ConstantTensor::vectorInts({-2});
  ConstantTensor ends = ConstantTensor::vectorInts({INT64_MAX});
  ConstantTensor sl = eval1(node("Slice"), {&r, &starts, &ends});
  EXPECT_EQ(sl.ints, (std::vector<int64_t>{2, 4}));
}

TEST(ConstantEval, ConstantOfShapeStaysSplat) {
  ConstantTensor shape = ConstantTensor::vectorInts({4096, 4096});
  ConstantTensor fill = eval1(node("ConstantOfShape"), {&shape});
  EXPECT_TRUE(fill.splat);
  EXPECT_EQ(fill.numElements(), 4096 * 4096);
  EXPECT_EQ(fill.floats.size(), 1u);
  // A comparison of two splats is a splat too.
  ConstantTensor zero;
  zero.dtype = TensorProto::FLOAT;
  zero.floats = {0};
  ConstantTensor eq = eval1(node("Equal"), {&fill, &zero});
  EXPECT_TRUE(eq.splat);
  EXPECT_EQ(eq.dtype, TensorProto::BOOL);
  EXPECT_EQ(eq.intAt(0), 1);
}

TEST(ConstantEval, WhereBroadcasts) {
  ConstantTensor cond;
  cond.dtype = TensorProto::BOOL;
  cond.shape = {2};
  cond.ints = {1, 0};
  ConstantTensor a = ConstantTensor::vectorInts({7, 7});
  ConstantTensor b = ConstantTensor::scalarInt(3, TensorProto::INT64);
  ConstantTensor w = eval1(node("Where"), {&cond, &a, &b});
  EXPECT_EQ(w.ints, (std::vector<int64_t>{7, 3}));
}

TEST(ConstantEval, ErrorsAreReported) {
  ConstantTensor data = ConstantTensor::vectorInts({1, 2, 3});
  ConstantTensor idx = ConstantTensor::scalarInt(5, TensorProto::INT64);
  std::string err;
  auto r = evaluateNode(node("Gather"), {&data, &idx}, err);
  EXPECT_FALSE(r.has_value());
  EXPECT_NE(err.find("out of range"), std::string::npos);
}

TEST(ConstantEval, UnknownOpsAreNotFolded) {
  ConstantTensor x = ConstantTensor::vectorInts({1});
  std::string err;
  EXPECT_FALSE(evaluateNode(node("MatMul"), {&x, &x}, err).has_value());
  EXPECT_TRUE(err.empty());
}
