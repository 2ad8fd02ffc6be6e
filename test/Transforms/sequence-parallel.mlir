// RUN: frenzy-opt %s -split-input-file -frenzy-tensor-parallel="degree=2 sequence-parallel=true" -verify-diagnostics | FileCheck %s
// A pre-norm MLP block under TP 2 with sequence parallelism: the layer's
// input comes replicated from outside the layers and is scattered; the
// norm runs on 3 of the 6 tokens (its scale through tp_copy, whose backward
// sums the partial gradient); sp_all_gather replaces tp_copy before the
// column-parallel matmul, sp_reduce_scatter replaces tp_all_reduce after
// the row-parallel one; the bias add, dropout (drawn at the unsplit
// tensor's positions: tp_split [0, 2, 1]) and the residual add run on the
// chunk; the head gets the value back whole.

// CHECK: module attributes {frenzy.sequence_parallel, frenzy.tp_degree = 2 : i64}
// CHECK-LABEL: func.func @block
// CHECK: %[[X:.*]] = frenzy.sp_scatter %arg0 {{.*}} : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
// CHECK: %[[G:.*]] = frenzy.tp_copy %{{.*}} : tensor<4xf32>
// CHECK: %[[N:.*]] = frenzy.layer_norm %[[X]], %[[G]], {{.*}} -> tensor<1x3x4xf32>
// CHECK: %[[A:.*]] = frenzy.sp_all_gather %[[N]] {{.*}} : tensor<1x3x4xf32> -> tensor<2x3x4xf32>
// CHECK: frenzy.matmul %[[A]], {{.*}} -> tensor<2x3x8xf32>
// CHECK: %[[P:.*]] = frenzy.matmul {{.*}} -> tensor<2x3x4xf32>
// CHECK: %[[RS:.*]] = frenzy.sp_reduce_scatter %[[P]] {{.*}} : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
// CHECK: %[[B:.*]] = frenzy.tp_copy %{{.*}} : tensor<4xf32>
// CHECK: %[[OB:.*]] = frenzy.add %[[B]], %[[RS]] {{.*}} -> tensor<1x3x4xf32>
// CHECK: %[[D:.*]] = frenzy.dropout %[[OB]] {{.*}}tp_split = array<i64: 0, 2, 1>{{.*}} : tensor<1x3x4xf32>
// CHECK: %[[R:.*]] = frenzy.add %[[X]], %[[D]] {{.*}} -> tensor<1x3x4xf32>
// CHECK: %[[W:.*]] = frenzy.sp_gather %[[R]] {{.*}}: tensor<1x3x4xf32> -> tensor<2x3x4xf32>
// CHECK: frenzy.relu %[[W]] {frenzy.block = #frenzy.block<head>}
func.func @block(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %g = frenzy.param "ln.g" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4xf32>
  %bt = frenzy.param "ln.b" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4xf32>
  %w1 = frenzy.param "fc.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16x4xf32>
  %w2 = frenzy.param "proj.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4x16xf32>
  %b2 = frenzy.param "proj.b" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4xf32>
  %n = frenzy.layer_norm %x, %g, %bt {axis = 2 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<0>} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %t1 = frenzy.transpose %w1 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<16x4xf32>) -> tensor<4x16xf32>
  %h = frenzy.matmul %n, %t1 {frenzy.block = #frenzy.block<0>} : (tensor<2x3x4xf32>, tensor<4x16xf32>) -> tensor<2x3x16xf32>
  %a = frenzy.gelu %h {approximate = "tanh", frenzy.block = #frenzy.block<0>} : tensor<2x3x16xf32>
  %t2 = frenzy.transpose %w2 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %o = frenzy.matmul %a, %t2 {frenzy.block = #frenzy.block<0>} : (tensor<2x3x16xf32>, tensor<16x4xf32>) -> tensor<2x3x4xf32>
  %ob = frenzy.add %b2, %o {frenzy.block = #frenzy.block<0>} : (tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %d = frenzy.dropout %ob {frenzy.block = #frenzy.block<0>, ratio = 0.1 : f64, training = true} : tensor<2x3x4xf32>
  %r = frenzy.add %x, %d {frenzy.block = #frenzy.block<0>} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %y = frenzy.relu %r {frenzy.block = #frenzy.block<head>} : tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Two layers: the first's sharded output feeds the second's token-wise ops
// as it is (no gather and scatter between them); [B*S, H] activations
// shard by the same flattened tokens.
// CHECK-LABEL: func.func @layers
// CHECK: frenzy.sp_scatter %arg0 {{.*}} : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NOT: frenzy.sp_scatter
// CHECK: frenzy.rms_norm {{.*}}frenzy.block = #frenzy.block<1>{{.*}} -> tensor<3x4xf32>
// CHECK-NOT: frenzy.sp_scatter
// CHECK: frenzy.sp_gather {{.*}} : tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: return
func.func @layers(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %g0 = frenzy.param "l0.g" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4xf32>
  %n0 = frenzy.rms_norm %x, %g0 {axis = 1 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<0>} : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  %r0 = frenzy.add %x, %n0 {frenzy.block = #frenzy.block<0>} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %g1 = frenzy.param "l1.g" {frenzy.block = #frenzy.block<1>, storage = "inline", trainable} : tensor<4xf32>
  %n1 = frenzy.rms_norm %r0, %g1 {axis = 1 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<1>} : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  %r1 = frenzy.add %r0, %n1 {frenzy.block = #frenzy.block<1>} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  return %r1 : tensor<6x4xf32>
}

// -----

// Tokens that do not divide by the degree: one error naming the op, the
// shape and the degree.
func.func @odd(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %g = frenzy.param "ln.g" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4xf32>
  // expected-error @+1 {{sequence parallelism (degree 2): 'frenzy.rms_norm' on 1x3x4: its 3 tokens do not divide by 2}}
  %n = frenzy.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64, frenzy.block = #frenzy.block<0>} : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  return %n : tensor<1x3x4xf32>
}
