// RUN: frenzy-opt %s -split-input-file -frenzy-tensor-parallel=degree=2 -verify-diagnostics | FileCheck %s
// A fused projection cut by Slices (a QKV or gate/up weight exported with
// indexing instead of Split): the weight and bias are split in k blocks,
// and each Slice takes its part's local share (parts of 8 -> [4r, 4r+4)).

// CHECK-LABEL: func.func @gate_up
// CHECK: frenzy.param "gu.w" {{{.*}}frenzy.shard = array<i64: 0, 2, 2>{{.*}}} : tensor<8x4xf32>
// CHECK: frenzy.param "gu.b" {{{.*}}frenzy.shard = array<i64: 0, 2, 2>{{.*}}} : tensor<8xf32>
// CHECK: frenzy.param "down.w" {{{.*}}frenzy.shard = array<i64: 1, 2, 1>{{.*}}} : tensor<4x4xf32>
// CHECK: frenzy.slice {{.*}}limits = array<i64: 2, 3, 4>, starts = array<i64: 0, 0, 0>{{.*}} : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
// CHECK: frenzy.slice {{.*}}limits = array<i64: 2, 3, 8>, starts = array<i64: 0, 0, 4>{{.*}} : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
// CHECK: frenzy.swiglu {{.*}} : tensor<2x3x4xf32>
// CHECK: frenzy.tp_all_reduce
func.func @gate_up(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %w = frenzy.param "gu.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16x4xf32>
  %b = frenzy.param "gu.b" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16xf32>
  %wd = frenzy.param "down.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<4x8xf32>
  %wt = frenzy.transpose %w {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<16x4xf32>) -> tensor<4x16xf32>
  %h = frenzy.matmul %x, %wt {frenzy.block = #frenzy.block<0>} : (tensor<2x3x4xf32>, tensor<4x16xf32>) -> tensor<2x3x16xf32>
  %hb = frenzy.add %b, %h {frenzy.block = #frenzy.block<0>} : (tensor<16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %g = frenzy.slice %hb {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 3, 8>, strides = array<i64: 1, 1, 1>} : (tensor<2x3x16xf32>) -> tensor<2x3x8xf32>
  %u = frenzy.slice %hb {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 8>, limits = array<i64: 2, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<2x3x16xf32>) -> tensor<2x3x8xf32>
  %a = frenzy.swiglu %g, %u {frenzy.block = #frenzy.block<0>} : tensor<2x3x8xf32>
  %wdt = frenzy.transpose %wd {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %o = frenzy.matmul %a, %wdt {frenzy.block = #frenzy.block<0>} : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

// -----

// Parts of unequal size (q 8, k and v 4 each: grouped-query attention
// fused into one weight) do not split into one descriptor per parameter:
// refused, naming the slice.
func.func @unequal(%x: tensor<1x3x8xf32>) -> tensor<1x3x4xf32> {
  %w = frenzy.param "qkv.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16x8xf32>
  %wt = frenzy.transpose %w {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %qkv = frenzy.matmul %x, %wt {frenzy.block = #frenzy.block<0>} : (tensor<1x3x8xf32>, tensor<8x16xf32>) -> tensor<1x3x16xf32>
  // expected-error @+1 {{tensor parallelism (degree 2): a slice [0, 8) of the split dim (size 16); Frenzy splits a projection's output sliced along it only into equal whole parts (a fused QKV or gate/up projection)}}
  %q = frenzy.slice %qkv {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 0>, limits = array<i64: 1, 3, 8>, strides = array<i64: 1, 1, 1>} : (tensor<1x3x16xf32>) -> tensor<1x3x8xf32>
  %k = frenzy.slice %qkv {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 8>, limits = array<i64: 1, 3, 12>, strides = array<i64: 1, 1, 1>} : (tensor<1x3x16xf32>) -> tensor<1x3x4xf32>
  %v = frenzy.slice %qkv {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 12>, limits = array<i64: 1, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<1x3x16xf32>) -> tensor<1x3x4xf32>
  %kv = frenzy.add %k, %v {frenzy.block = #frenzy.block<0>} : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %kv : tensor<1x3x4xf32>
}

// -----

// torch's nn.MultiheadAttention (seq-first [3, 2, 8], 2 heads of 4): q
// [seq, batch, hidden] becomes [seq, batch*heads, head dim], split on dim 1
// in 2 (batch) blocks; the 3-d attention is wrapped into [batch, heads, T,
// D] (the runtime draws its dropout per sample and global head); the
// out_proj Gemm is row-parallel with its bias added after the sum; a
// dropout of a split activation records its geometry (tp_split).
// CHECK-LABEL: func.func @mha
// CHECK: frenzy.param "o.w" {{{.*}}frenzy.shard = array<i64: 1, 2, 1>{{.*}}} : tensor<8x4xf32>
// CHECK: frenzy.reshape {{.*}} : (tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
// CHECK: frenzy.reshape {{.*}} : (tensor<2x3x4xf32>) -> tensor<2x1x3x4xf32>
// CHECK: frenzy.attention {{.*}}tp_parts = 2{{.*}} -> tensor<2x1x3x4xf32>
// CHECK: frenzy.reshape {{.*}} : (tensor<2x1x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: frenzy.dropout {{.*}}tp_split = array<i64: 2, 2, 1>{{.*}} : tensor<3x2x4xf32>
// CHECK: %[[G:.*]] = frenzy.gemm %{{[^,]*}}, %{{[^,]*}} {{{.*}}} : (tensor<6x4xf32>, tensor<8x4xf32>) -> tensor<6x8xf32>
// CHECK: %[[R:.*]] = frenzy.tp_all_reduce %[[G]]
// CHECK: frenzy.add %[[R]], %{{.*}} : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
func.func @mha(%x: tensor<3x2x8xf32>) -> tensor<6x8xf32> {
  %w = frenzy.param "in.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<24x8xf32>
  %wo = frenzy.param "o.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<8x8xf32>
  %bo = frenzy.param "o.b" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<8xf32>
  %wt = frenzy.transpose %w {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<24x8xf32>) -> tensor<8x24xf32>
  %qkv = frenzy.matmul %x, %wt {frenzy.block = #frenzy.block<0>} : (tensor<3x2x8xf32>, tensor<8x24xf32>) -> tensor<3x2x24xf32>
  %q0 = frenzy.slice %qkv {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 0>, limits = array<i64: 3, 2, 8>, strides = array<i64: 1, 1, 1>} : (tensor<3x2x24xf32>) -> tensor<3x2x8xf32>
  %k0 = frenzy.slice %qkv {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 8>, limits = array<i64: 3, 2, 16>, strides = array<i64: 1, 1, 1>} : (tensor<3x2x24xf32>) -> tensor<3x2x8xf32>
  %v0 = frenzy.slice %qkv {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 16>, limits = array<i64: 3, 2, 24>, strides = array<i64: 1, 1, 1>} : (tensor<3x2x24xf32>) -> tensor<3x2x8xf32>
  %q1 = frenzy.reshape %q0 {frenzy.block = #frenzy.block<0>} : (tensor<3x2x8xf32>) -> tensor<3x4x4xf32>
  %k1 = frenzy.reshape %k0 {frenzy.block = #frenzy.block<0>} : (tensor<3x2x8xf32>) -> tensor<3x4x4xf32>
  %v1 = frenzy.reshape %v0 {frenzy.block = #frenzy.block<0>} : (tensor<3x2x8xf32>) -> tensor<3x4x4xf32>
  %q = frenzy.transpose %q1 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0, 2>} : (tensor<3x4x4xf32>) -> tensor<4x3x4xf32>
  %k = frenzy.transpose %k1 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0, 2>} : (tensor<3x4x4xf32>) -> tensor<4x3x4xf32>
  %v = frenzy.transpose %v1 {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0, 2>} : (tensor<3x4x4xf32>) -> tensor<4x3x4xf32>
  %a = frenzy.attention %q, %k, %v {dropout = 0.1 : f64, frenzy.block = #frenzy.block<0>, scale = 0.5 : f64} : (tensor<4x3x4xf32>, tensor<4x3x4xf32>, tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %at = frenzy.transpose %a {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0, 2>} : (tensor<4x3x4xf32>) -> tensor<3x4x4xf32>
  %ar = frenzy.reshape %at {frenzy.block = #frenzy.block<0>} : (tensor<3x4x4xf32>) -> tensor<3x2x8xf32>
  %d = frenzy.dropout %ar {frenzy.block = #frenzy.block<0>, ratio = 0.1 : f64, training = true} : tensor<3x2x8xf32>
  %flat = frenzy.reshape %d {frenzy.block = #frenzy.block<0>} : (tensor<3x2x8xf32>) -> tensor<6x8xf32>
  %o = frenzy.gemm %flat, %wo, %bo {alpha = 1.0 : f64, beta = 1.0 : f64, frenzy.block = #frenzy.block<0>, transA = false, transB = true} : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  return %o : tensor<6x8xf32>
}
