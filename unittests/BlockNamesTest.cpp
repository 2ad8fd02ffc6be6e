//===- BlockNamesTest.cpp - layer indices from exporter names -------------===//
#include "frenzy/Dialect/Frenzy/Transforms/BlockNames.h"

#include <gtest/gtest.h>

using frenzy::parseNameScope;

TEST(BlockNames, TorchNodeScopes) {
  EXPECT_EQ(parseNameScope("/h.3/attn/c_attn/MatMul").layer, 3);
  EXPECT_EQ(parseNameScope("/model/layers.12/mlp/up_proj/MatMul").layer, 12);
  EXPECT_EQ(parseNameScope("/encoder/layers.1/self_attn/Softmax").layer, 1);
  EXPECT_EQ(parseNameScope("/transformer/h.0/Add_1").layer, 0);
}

TEST(BlockNames, ParameterPaths) {
  EXPECT_EQ(parseNameScope("transformer.h.7.ln_1.weight").layer, 7);
  EXPECT_EQ(parseNameScope("model.layers.31.self_attn.q_proj.weight").layer, 31);
  EXPECT_FALSE(parseNameScope("transformer.wte.weight").layer.has_value());
  EXPECT_TRUE(parseNameScope("transformer.wte.weight").hasModulePath);
}

TEST(BlockNames, ModulesOutsideTheLayers) {
  auto lnf = parseNameScope("/ln_f/LayerNormalization");
  EXPECT_FALSE(lnf.layer.has_value());
  EXPECT_TRUE(lnf.hasModulePath);
  // The op's own name never counts: "Add_1" is not module "Add", index 1.
  EXPECT_FALSE(parseNameScope("/Add_1").layer.has_value());
  EXPECT_FALSE(parseNameScope("/Add_1").hasModulePath);
}

TEST(BlockNames, UninformativeNames) {
  EXPECT_FALSE(parseNameScope("").hasModulePath);
  EXPECT_FALSE(parseNameScope("Constant_33").layer.has_value());
  EXPECT_FALSE(parseNameScope("onnx::Unsqueeze_67").hasModulePath);
  EXPECT_FALSE(parseNameScope("MatMul_123").layer.has_value());
}
