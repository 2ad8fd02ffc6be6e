//===- GptLayers.h - a GPT block stack in the frenzy dialect ---*- C++ -*-===//
//
// Test models written directly in the dialect (no ONNX, any size): the
// Korthikanti memory checks and the partitioner's enumeration tests use it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_UNITTESTS_GPTLAYERS_H
#define FRENZY_UNITTESTS_GPTLAYERS_H

#include "llvm/Support/FormatVariadic.h"

#include <string>

namespace frenzy::testmodels {

/// A GPT-2 block stack (pre-LN, fused attention with dropout, GELU MLP,
/// residual dropouts), batch 1, in the shape the importer emits.
inline std::string gptLayers(int64_t s, int64_t h, int64_t a,
                             int64_t layers = 2) {
  int64_t d = h / a;
  std::string m = llvm::formatv(R"(
module attributes {{frenzy.batch = 1 : i64, frenzy.num_blocks = {2} : i64} {{
func.func @forward(%in: tensor<1x{0}x{1}xf32>) -> (tensor<f32> {{frenzy.name = "loss"}) {{
  %es = frenzy.param "embed.scale" {{storage = "inline", trainable, frenzy.block = #frenzy.block<embed>} : tensor<{1}xf32>
  %x0 = frenzy.mul %in, %es {{frenzy.block = #frenzy.block<embed>} : (tensor<1x{0}x{1}xf32>, tensor<{1}xf32>) -> tensor<1x{0}x{1}xf32>
)", s, h, layers).str();
  std::string x = "%x0";
  for (int l = 0; l < layers; ++l) {
    m += llvm::formatv(R"(
  %g1_{0} = frenzy.param "h{0}.ln1.w" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}xf32>
  %b1_{0} = frenzy.param "h{0}.ln1.b" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}xf32>
  %wq_{0} = frenzy.param "h{0}.qkv.w" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{5}x{3}xf32>
  %bq_{0} = frenzy.param "h{0}.qkv.b" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{5}xf32>
  %wp_{0} = frenzy.param "h{0}.proj.w" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}x{3}xf32>
  %bp_{0} = frenzy.param "h{0}.proj.b" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}xf32>
  %g2_{0} = frenzy.param "h{0}.ln2.w" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}xf32>
  %b2_{0} = frenzy.param "h{0}.ln2.b" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}xf32>
  %wf_{0} = frenzy.param "h{0}.fc.w" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{6}x{3}xf32>
  %bf_{0} = frenzy.param "h{0}.fc.b" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{6}xf32>
  %wo_{0} = frenzy.param "h{0}.out.w" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}x{6}xf32>
  %bo_{0} = frenzy.param "h{0}.out.b" {{storage = "inline", trainable, frenzy.block = #frenzy.block<{0}>} : tensor<{3}xf32>
  %ln1_{0} = frenzy.layer_norm {1}, %g1_{0}, %b1_{0} {{axis = 2 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<{3}xf32>, tensor<{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %wqt_{0} = frenzy.transpose %wq_{0} {{perm = array<i64: 1, 0>, frenzy.block = #frenzy.block<{0}>} : (tensor<{5}x{3}xf32>) -> tensor<{3}x{5}xf32>
  %qkv0_{0} = frenzy.matmul %ln1_{0}, %wqt_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<{3}x{5}xf32>) -> tensor<1x{2}x{5}xf32>
  %qkv_{0} = frenzy.add %bq_{0}, %qkv0_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<{5}xf32>, tensor<1x{2}x{5}xf32>) -> tensor<1x{2}x{5}xf32>
  %sp_{0}:3 = frenzy.split %qkv_{0} {{axis = 2 : i64, frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{5}xf32>) -> (tensor<1x{2}x{3}xf32>, tensor<1x{2}x{3}xf32>, tensor<1x{2}x{3}xf32>)
)", l, x, s, h, a, 3 * h, 4 * h).str();
    for (int i = 0; i < 3; ++i)
      m += llvm::formatv(R"(
  %r{1}_{0} = frenzy.reshape %sp_{0}#{1} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>) -> tensor<1x{2}x{4}x{5}xf32>
  %t{1}_{0} = frenzy.transpose %r{1}_{0} {{perm = array<i64: 0, 2, 1, 3>, frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{4}x{5}xf32>) -> tensor<1x{4}x{2}x{5}xf32>
)", l, i, s, h, a, d).str();
    m += llvm::formatv(R"(
  %att_{0} = frenzy.attention %t0_{0}, %t1_{0}, %t2_{0} {{scale = 0.125 : f64, causal, dropout = 0.1 : f64, frenzy.block = #frenzy.block<{0}>} : (tensor<1x{4}x{2}x{5}xf32>, tensor<1x{4}x{2}x{5}xf32>, tensor<1x{4}x{2}x{5}xf32>) -> tensor<1x{4}x{2}x{5}xf32>
  %at_{0} = frenzy.transpose %att_{0} {{perm = array<i64: 0, 2, 1, 3>, frenzy.block = #frenzy.block<{0}>} : (tensor<1x{4}x{2}x{5}xf32>) -> tensor<1x{2}x{4}x{5}xf32>
  %ar_{0} = frenzy.reshape %at_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{4}x{5}xf32>) -> tensor<1x{2}x{3}xf32>
  %wpt_{0} = frenzy.transpose %wp_{0} {{perm = array<i64: 1, 0>, frenzy.block = #frenzy.block<{0}>} : (tensor<{3}x{3}xf32>) -> tensor<{3}x{3}xf32>
  %p0_{0} = frenzy.matmul %ar_{0}, %wpt_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<{3}x{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %p_{0} = frenzy.add %bp_{0}, %p0_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<{3}xf32>, tensor<1x{2}x{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %pd_{0} = frenzy.dropout %p_{0} {{ratio = 0.1 : f64, training = true, frenzy.block = #frenzy.block<{0}>} : tensor<1x{2}x{3}xf32>
  %x2_{0} = frenzy.add {1}, %pd_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<1x{2}x{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %ln2_{0} = frenzy.layer_norm %x2_{0}, %g2_{0}, %b2_{0} {{axis = 2 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<{3}xf32>, tensor<{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %wft_{0} = frenzy.transpose %wf_{0} {{perm = array<i64: 1, 0>, frenzy.block = #frenzy.block<{0}>} : (tensor<{6}x{3}xf32>) -> tensor<{3}x{6}xf32>
  %f0_{0} = frenzy.matmul %ln2_{0}, %wft_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<{3}x{6}xf32>) -> tensor<1x{2}x{6}xf32>
  %f_{0} = frenzy.add %bf_{0}, %f0_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<{6}xf32>, tensor<1x{2}x{6}xf32>) -> tensor<1x{2}x{6}xf32>
  %ge_{0} = frenzy.gelu %f_{0} {{approximate = "tanh", frenzy.block = #frenzy.block<{0}>} : tensor<1x{2}x{6}xf32>
  %wot_{0} = frenzy.transpose %wo_{0} {{perm = array<i64: 1, 0>, frenzy.block = #frenzy.block<{0}>} : (tensor<{3}x{6}xf32>) -> tensor<{6}x{3}xf32>
  %o0_{0} = frenzy.matmul %ge_{0}, %wot_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{6}xf32>, tensor<{6}x{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %o_{0} = frenzy.add %bo_{0}, %o0_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<{3}xf32>, tensor<1x{2}x{3}xf32>) -> tensor<1x{2}x{3}xf32>
  %od_{0} = frenzy.dropout %o_{0} {{ratio = 0.1 : f64, training = true, frenzy.block = #frenzy.block<{0}>} : tensor<1x{2}x{3}xf32>
  %y_{0} = frenzy.add %x2_{0}, %od_{0} {{frenzy.block = #frenzy.block<{0}>} : (tensor<1x{2}x{3}xf32>, tensor<1x{2}x{3}xf32>) -> tensor<1x{2}x{3}xf32>
)", l, x, s, h, a, d, 4 * h).str();
    x = "%y_" + std::to_string(l);
  }
  m += llvm::formatv(R"(
  %loss = frenzy.reduce_mean {1} {{axes = array<i64: 0, 1, 2>, keepdims = false, frenzy.block = #frenzy.block<head>} : (tensor<1x{0}x{2}xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
}
)", s, x, h).str();
  return m;
}

} // namespace frenzy::testmodels

#endif
