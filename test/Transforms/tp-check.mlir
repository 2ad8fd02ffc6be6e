// RUN: frenzy-opt %s -frenzy-tp-check=degrees=2,3,4 | FileCheck %s
// frenzy-tp-check records the TP degrees the forward graph cannot be split
// for, with the first error of frenzy-tensor-parallel on a copy; the module
// itself is not split. Here the gate/up parts (8 each) split 2 and 4 ways
// but not 3.
// CHECK: module attributes {frenzy.tp_refusals = {"3" = "{{.*}}a fused projection's part of size 8 does not split 3 ways"}}
// CHECK: frenzy.param "gu.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16x4xf32>
// CHECK-NOT: frenzy.tp_copy
func.func @gate_up(%x: tensor<2x3x4xf32>) -> tensor<2x3x8xf32> {
  %w = frenzy.param "gu.w" {frenzy.block = #frenzy.block<0>, storage = "inline", trainable} : tensor<16x4xf32>
  %wt = frenzy.transpose %w {frenzy.block = #frenzy.block<0>, perm = array<i64: 1, 0>} : (tensor<16x4xf32>) -> tensor<4x16xf32>
  %h = frenzy.matmul %x, %wt {frenzy.block = #frenzy.block<0>} : (tensor<2x3x4xf32>, tensor<4x16xf32>) -> tensor<2x3x16xf32>
  %g = frenzy.slice %h {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 3, 8>, strides = array<i64: 1, 1, 1>} : (tensor<2x3x16xf32>) -> tensor<2x3x8xf32>
  %u = frenzy.slice %h {frenzy.block = #frenzy.block<0>, starts = array<i64: 0, 0, 8>, limits = array<i64: 2, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<2x3x16xf32>) -> tensor<2x3x8xf32>
  %a = frenzy.swiglu %g, %u {frenzy.block = #frenzy.block<0>} : tensor<2x3x8xf32>
  return %a : tensor<2x3x8xf32>
}
