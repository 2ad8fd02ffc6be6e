// -frenzy-test-print-memory: per-op bytes, saved activations, model states.
// RUN: frenzy-opt %s -frenzy-autodiff -frenzy-optimizer -frenzy-test-print-memory="ops=1 executor=1" -o /dev/null | FileCheck %s
// RUN: frenzy-opt %s -frenzy-autodiff -frenzy-optimizer -frenzy-test-print-memory="precision=bf16-mixed dp=4 zero=1" -o /dev/null | FileCheck %s --check-prefix=ZERO
// RUN: frenzy-opt %s -frenzy-autodiff -frenzy-optimizer -frenzy-test-print-memory="recompute=full" -o /dev/null | FileCheck %s --check-prefix=FULL
// RUN: not frenzy-opt %s -frenzy-autodiff -frenzy-test-print-memory="recompute=some" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not frenzy-opt %s -frenzy-autodiff -frenzy-test-print-memory="zero=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADZERO

// x [8, 16] fp32 = 512 B. The matmul result (input of the GELU, 512 B) and
// the GELU result (input of the second matmul's weight gradient, 512 B) are
// saved; x is an input (persistent), and the first matmul's weight
// gradient reads it in place.
// CHECK: op frenzy.matmul: result 512 B, workspace 0 B, live after 512 B
// CHECK: op frenzy.gelu: result 512 B, workspace 0 B, live after 1024 B
// CHECK: saved value of frenzy.gelu in block 0: 512 B
// CHECK: saved value of frenzy.matmul in block 0: 512 B
// CHECK: saved block 0: 1024 B
// Two 16x16 weights, AdamW: 512 params, 2 KiB of weights, 4 KiB of moments;
// the executor model keeps gradients as activations.
// CHECK: state: 512 params, weights 2048 B, gradients 0 B, master 0 B, moments 4096 B
// CHECK: peak:

// Mixed precision, ZeRO-1 over 4 ranks: 2 + 2 bytes per parameter whole,
// master and moments (12 bytes) split four ways.
// ZERO: saved block 0: 512 B
// ZERO: state: 512 params, weights 1024 B, gradients 1024 B, master 512 B, moments 1024 B

// Full recomputation keeps nothing inside the block (its input is x).
// FULL-NOT: saved block 0
// FULL: state:

// BAD: unknown recompute 'some'; valid values: none, selective, full
// BADZERO: unknown ZeRO stage 4; valid values: 0, 1, 2, 3
module {
  func.func @forward(%x: tensor<8x16xf32>) -> (tensor<f32> {frenzy.name = "loss"}) {
    %w1 = frenzy.param "w1" {storage = "inline", trainable, frenzy.block = #frenzy.block<0>} : tensor<16x16xf32>
    %w2 = frenzy.param "w2" {storage = "inline", trainable, frenzy.block = #frenzy.block<0>} : tensor<16x16xf32>
    %h = frenzy.matmul %x, %w1 {frenzy.block = #frenzy.block<0>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %g = frenzy.gelu %h {frenzy.block = #frenzy.block<0>} : tensor<8x16xf32>
    %y = frenzy.matmul %g, %w2 {frenzy.block = #frenzy.block<0>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %l = frenzy.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false, frenzy.block = #frenzy.block<head>} : (tensor<8x16xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
