// RUN: frenzy-opt %s -split-input-file -frenzy-tensor-parallel=degree=2 -verify-diagnostics | FileCheck %s
// An MLP block: column-parallel (f before, weight rows and bias split),
// gelu on the local share, row-parallel (weight columns split, g after,
// bias replicated). Outside blocks nothing changes.

// CHECK: module attributes {frenzy.tp_degree = 2 : i64}
// CHECK-LABEL: func.func @mlp
// CHECK: frenzy.param "fc.w" {{{.*}}frenzy.shard = array<i64: 0, 2, 1>{{.*}}} : tensor<8x4xf32>
// CHECK: frenzy.param "fc.b" {{{.*}}frenzy.shard = array<i64: 0, 2, 1>{{.*}}} : tensor<8xf32>
// CHECK: frenzy.param "proj.w" {{{.*}}frenzy.shard = array<i64: 1, 2, 1>{{.*}}} : tensor<4x8xf32>
// CHECK: frenzy.param "proj.b" {{{.*}}} : tensor<4xf32>
// CHECK: %[[F:.*]] = frenzy.tp_copy %arg0 {{.*}} : tensor<2x3x4xf32>
// CHECK: frenzy.matmul %[[F]], {{.*}} -> tensor<2x3x8xf32>
// CHECK: frenzy.gelu {{.*}} : tensor<2x3x8xf32>
// CHECK: %[[P:.*]] = frenzy.matmul {{.*}} -> tensor<2x3x4xf32>
// CHECK: %[[G:.*]] = frenzy.tp_all_reduce %[[P]] {{.*}} : tensor<2x3x4xf32>
// CHECK: frenzy.add %{{.*}}, %[[G]]
func.func @mlp(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %w1 = frenzy.param "fc.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16x4xf32>
  %b1 = frenzy.param "fc.b" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16xf32>
  %w2 = frenzy.param "proj.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4x16xf32>
  %b2 = frenzy.param "proj.b" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4xf32>
  %t1 = frenzy.transpose %w1 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<16x4xf32>) -> tensor<4x16xf32>
  %h = frenzy.matmul %x, %t1 {frenzy.block = #frenzy.block<0>} : (tensor<2x3x4xf32>, tensor<4x16xf32>) -> tensor<2x3x16xf32>
  %hb = frenzy.add %b1, %h {frenzy.block = #frenzy.block<0>} : (tensor<16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %a = frenzy.gelu %hb {approximate = "tanh", frenzy.block = #frenzy.block<0>} : tensor<2x3x16xf32>
  %t2 = frenzy.transpose %w2 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %o = frenzy.matmul %a, %t2 {frenzy.block = #frenzy.block<0>} : (tensor<2x3x16xf32>, tensor<16x4xf32>) -> tensor<2x3x4xf32>
  %ob = frenzy.add %b2, %o {frenzy.block = #frenzy.block<0>} : (tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %ob : tensor<2x3x4xf32>
}

// -----

// Attention with a fused QKV projection: the weight is split in 3 blocks (q,
// k and v each give half their rows), heads are split, the output
// projection is row-parallel.
// CHECK-LABEL: func.func @attention
// CHECK: frenzy.param "qkv.w" {{{.*}}frenzy.shard = array<i64: 0, 2, 3>{{.*}}} : tensor<12x8xf32>
// CHECK: frenzy.split {{.*}} -> (tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>)
// CHECK: frenzy.reshape {{.*}} -> tensor<1x3x1x4xf32>
// CHECK: frenzy.attention {{.*}}tp_parts = 2{{.*}} -> tensor<1x1x3x4xf32>
// CHECK: frenzy.tp_all_reduce
func.func @attention(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %w = frenzy.param "qkv.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<24x8xf32>
  %wo = frenzy.param "o.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<8x8xf32>
  %wt = frenzy.transpose %w {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<24x8xf32>) -> tensor<8x24xf32>
  %qkv = frenzy.matmul %x, %wt {frenzy.block = #frenzy.block<0>} : (tensor<1x3x8xf32>, tensor<8x24xf32>) -> tensor<1x3x24xf32>
  %s:3 = frenzy.split %qkv {axis = 2 : i64, frenzy.block = #frenzy.block<0>} : (tensor<1x3x24xf32>) -> (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>)
  %q0 = frenzy.reshape %s#0 {frenzy.block = #frenzy.block<0>} : (tensor<1x3x8xf32>) -> tensor<1x3x2x4xf32>
  %k0 = frenzy.reshape %s#1 {frenzy.block = #frenzy.block<0>} : (tensor<1x3x8xf32>) -> tensor<1x3x2x4xf32>
  %v0 = frenzy.reshape %s#2 {frenzy.block = #frenzy.block<0>} : (tensor<1x3x8xf32>) -> tensor<1x3x2x4xf32>
  %q = frenzy.transpose %q0 {frenzy.block = #frenzy.block<0>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
  %k = frenzy.transpose %k0 {frenzy.block = #frenzy.block<0>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
  %v = frenzy.transpose %v0 {frenzy.block = #frenzy.block<0>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
  %a = frenzy.attention %q, %k, %v {frenzy.block = #frenzy.block<0>, scale = 0.5 : f64, causal} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %at = frenzy.transpose %a {frenzy.block = #frenzy.block<0>, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32>
  %ar = frenzy.reshape %at {frenzy.block = #frenzy.block<0>} : (tensor<1x3x2x4xf32>) -> tensor<1x3x8xf32>
  %wot = frenzy.transpose %wo {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = frenzy.matmul %ar, %wot {frenzy.block = #frenzy.block<0>} : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}

// -----

// A split value reaching an op the pass cannot split: one error naming it.
func.func @norm(%x: tensor<2x4xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %w = frenzy.param "fc.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<8x4xf32>
  %t = frenzy.transpose %w {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %h = frenzy.matmul %x, %t {frenzy.block = #frenzy.block<0>} : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  // expected-error @+1 {{tensor parallelism (degree 2): 'frenzy.layer_norm' reads a split value; Frenzy cannot split it yet}}
  %n = frenzy.layer_norm %h, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<0>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %n : tensor<2x8xf32>
}
