// Round trip: print, parse, print again gives the same text.
// RUN: frenzy-opt %s | frenzy-opt | FileCheck %s
// RUN: frenzy-opt %s --mlir-print-op-generic | frenzy-opt | FileCheck %s

// CHECK-LABEL: func @values
func.func @values() -> (tensor<8x4xf32>, tensor<4xbf16>, tensor<2x2xf32>, tensor<3xi64>) {
  // CHECK: frenzy.param "w" {storage = "inline", trainable} : tensor<8x4xf32>
  %w = frenzy.param "w" {storage = "inline", trainable} : tensor<8x4xf32>
  // CHECK: frenzy.param "e" {file = "m.data", length = 8 : i64, offset = 64 : i64, storage = "external"} : tensor<4xbf16>
  %e = frenzy.param "e" {storage = "external", file = "m.data", offset = 64 : i64, length = 8 : i64} : tensor<4xbf16>
  // CHECK: frenzy.param "c" {storage = "constant"} : tensor<2x2xf32>
  %c = frenzy.param "c" {storage = "constant"} : tensor<2x2xf32>
  // CHECK: frenzy.constant dense<[1, 2, 3]> : tensor<3xi64>
  %k = frenzy.constant dense<[1, 2, 3]> : tensor<3xi64>
  return %w, %e, %c, %k : tensor<8x4xf32>, tensor<4xbf16>, tensor<2x2xf32>, tensor<3xi64>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %m: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // CHECK: frenzy.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = frenzy.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = frenzy.mul %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = frenzy.pow %1, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: frenzy.equal {{.*}} -> tensor<2x3xi1>
  %3 = frenzy.equal %2, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %4 = frenzy.and %3, %m : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: frenzy.where
  %5 = frenzy.where %4, %2, %a : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = frenzy.tanh %5 : tensor<2x3xf32>
  %7 = frenzy.erf %6 : tensor<2x3xf32>
  // CHECK: frenzy.gelu %{{.*}} {approximate = "tanh"} : tensor<2x3xf32>
  %8 = frenzy.gelu %7 {approximate = "tanh"} : tensor<2x3xf32>
  %9 = frenzy.silu %8 : tensor<2x3xf32>
  // CHECK: frenzy.swiglu
  %10 = frenzy.swiglu %9, %8 : tensor<2x3xf32>
  // CHECK: frenzy.dropout %{{.*}} {ratio = 1.000000e-01 : f64, training = true}
  %11 = frenzy.dropout %10 {ratio = 0.1 : f64, training = true} : tensor<2x3xf32>
  // CHECK: frenzy.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xbf16>
  %12 = frenzy.cast %11 : tensor<2x3xf32> -> tensor<2x3xbf16>
  %13 = frenzy.cast %12 : tensor<2x3xbf16> -> tensor<2x3xf32>
  return %13 : tensor<2x3xf32>
}

// CHECK-LABEL: func @transformer_ops
func.func @transformer_ops(%x: tensor<2x16x64xf32>, %w: tensor<64x192xf32>, %g: tensor<64xf32>,
                           %ids: tensor<2x16xi64>, %emb: tensor<100x64xf32>) -> tensor<f32> {
  // CHECK: frenzy.gather
  %e = frenzy.gather %emb, %ids {axis = 0 : i64} : (tensor<100x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  // CHECK: frenzy.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64
  %n = frenzy.layer_norm %e, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: frenzy.rms_norm
  %r = frenzy.rms_norm %n, %g {axis = 2 : i64, epsilon = 1.0e-6 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %qkv = frenzy.matmul %r, %w : (tensor<2x16x64xf32>, tensor<64x192xf32>) -> tensor<2x16x192xf32>
  // CHECK: frenzy.split {{.*}} -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
  %q, %k, %v = frenzy.split %qkv {axis = 2 : i64} : (tensor<2x16x192xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
  %q4 = frenzy.reshape %q : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
  // CHECK: frenzy.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
  %qt = frenzy.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  %mask = frenzy.constant dense<true> : tensor<16x16xi1>
  %tri = frenzy.trilu %mask {upper = true, k = 1 : i64} : tensor<16x16xi1>
  // CHECK: frenzy.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64}
  %a = frenzy.attention %qt, %qt, %qt, %tri {scale = 0.25 : f64, causal} : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<16x16xi1>) -> tensor<2x4x16x16xf32>
  %s = frenzy.softmax %a {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %ls = frenzy.log_softmax %s {axis = 3 : i64} : tensor<2x4x16x16xf32>
  // CHECK: frenzy.reduce_mean {{.*}}axes = array<i64: 3>, keepdims = true
  %m = frenzy.reduce_mean %ls {axes = array<i64: 3>, keepdims = true} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x1xf32>
  %sq = frenzy.squeeze %m {axes = array<i64: 3>} : (tensor<2x4x16x1xf32>) -> tensor<2x4x16xf32>
  %us = frenzy.unsqueeze %sq {axes = array<i64: 0>} : (tensor<2x4x16xf32>) -> tensor<1x2x4x16xf32>
  %ex = frenzy.expand %us : (tensor<1x2x4x16xf32>) -> tensor<3x2x4x16xf32>
  // CHECK: frenzy.slice
  %sl = frenzy.slice %ex {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 3, 2, 4, 16>, strides = array<i64: 2, 1, 1, 1>} : (tensor<3x2x4x16xf32>) -> tensor<2x2x4x16xf32>
  %cc = frenzy.concat %sl, %sl {axis = 0 : i64} : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>) -> tensor<4x2x4x16xf32>
  %flat = frenzy.reshape %cc : (tensor<4x2x4x16xf32>) -> tensor<32x16xf32>
  %labels = frenzy.constant dense<1> : tensor<32xi64>
  // CHECK: frenzy.softmax_cross_entropy_loss %{{.*}}, %{{.*}} {ignore_index = -100 : i64}
  %loss = frenzy.softmax_cross_entropy_loss %flat, %labels {reduction = "mean", ignore_index = -100 : i64} : (tensor<32x16xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func @gemm_and_blocks
func.func @gemm_and_blocks(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK: frenzy.gemm {{.*}} {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, frenzy.block = #frenzy.block<3>, transA = false, transB = true}
  %0 = frenzy.gemm %a, %b, %c {transA = false, transB = true, alpha = 1.0 : f64, beta = 1.0 : f64, frenzy.block = #frenzy.block<3>} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: frenzy.block = #frenzy.block<embed>
  %1 = frenzy.relu %0 {frenzy.block = #frenzy.block<embed>} : tensor<4x16xf32>
  // CHECK: frenzy.block = #frenzy.block<head>
  %2 = frenzy.neg %1 {frenzy.block = #frenzy.block<head>} : tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
