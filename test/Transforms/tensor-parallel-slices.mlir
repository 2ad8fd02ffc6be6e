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
