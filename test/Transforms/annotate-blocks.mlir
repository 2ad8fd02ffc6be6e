// frenzy-annotate-blocks: layer indices from node names, else from structure.
// RUN: frenzy-opt %s -split-input-file -frenzy-annotate-blocks | FileCheck %s
// RUN: frenzy-opt %s -split-input-file -frenzy-annotate-blocks=structural-only | FileCheck %s --check-prefix=STRUCT

// Two layers named like torch.onnx writes them; embedding and head outside.
// CHECK-LABEL: module attributes {frenzy.num_blocks = 2 : i64}
// CHECK: frenzy.param "wte" {frenzy.block = #frenzy.block<embed>
// CHECK: frenzy.param "h.0.w" {frenzy.block = #frenzy.block<0>
// CHECK: frenzy.param "h.1.w" {frenzy.block = #frenzy.block<1>
// CHECK: frenzy.param "ln_f.w" {frenzy.block = #frenzy.block<head>
// CHECK: frenzy.gather {{.*}}#frenzy.block<embed>
// CHECK: frenzy.matmul {{.*}}#frenzy.block<0>
// CHECK: frenzy.relu {{.*}}#frenzy.block<0>
// CHECK: frenzy.add {{.*}}#frenzy.block<0>
// CHECK: frenzy.matmul {{.*}}#frenzy.block<1>
// CHECK: frenzy.relu {{.*}}#frenzy.block<1>
// CHECK: frenzy.add {{.*}}#frenzy.block<1>
// CHECK: frenzy.layer_norm {{.*}}#frenzy.block<head>
// CHECK: frenzy.neg {{.*}}#frenzy.block<head>

// Without names the repeated (matmul with an 8x8 weight) pattern is found.
// STRUCT-LABEL: module attributes {frenzy.num_blocks = 2 : i64}
// STRUCT: frenzy.gather {{.*}}#frenzy.block<embed>
// STRUCT: frenzy.matmul {{.*}}#frenzy.block<0>
// STRUCT: frenzy.relu {{.*}}#frenzy.block<0>
// STRUCT: frenzy.add {{.*}}#frenzy.block<0>
// STRUCT: frenzy.matmul {{.*}}#frenzy.block<1>
// STRUCT: frenzy.add {{.*}}#frenzy.block<1>
// STRUCT: frenzy.layer_norm {{.*}}#frenzy.block<head>
// STRUCT: frenzy.neg {{.*}}#frenzy.block<head>
module {
  func.func @forward(%ids: tensor<2x4xi64>) -> tensor<2x4x8xf32> {
    %wte = frenzy.param "wte" {storage = "inline", trainable} : tensor<16x8xf32> loc("wte")
    %w0 = frenzy.param "h.0.w" {storage = "inline", trainable} : tensor<8x8xf32> loc("h.0.w")
    %w1 = frenzy.param "h.1.w" {storage = "inline", trainable} : tensor<8x8xf32> loc("h.1.w")
    %g = frenzy.param "ln_f.w" {storage = "inline", trainable} : tensor<8xf32> loc("ln_f.w")
    %e = frenzy.gather %wte, %ids {axis = 0 : i64} : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32> loc("/wte/Gather")
    %m0 = frenzy.matmul %e, %w0 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32> loc("/h.0/mlp/MatMul")
    %r0 = frenzy.relu %m0 : tensor<2x4x8xf32> loc("/h.0/mlp/Relu")
    %a0 = frenzy.add %e, %r0 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/h.0/Add")
    %m1 = frenzy.matmul %a0, %w1 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32> loc("/h.1/mlp/MatMul")
    %r1 = frenzy.relu %m1 : tensor<2x4x8xf32> loc("/h.1/mlp/Relu")
    %a1 = frenzy.add %a0, %r1 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/h.1/Add")
    %n = frenzy.layer_norm %a1, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("/ln_f/LayerNormalization")
    %o = frenzy.neg %n : tensor<2x4x8xf32> loc("/Neg")
    return %o : tensor<2x4x8xf32>
  }
}
