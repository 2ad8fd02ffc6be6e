// frenzy-autodiff{loss=cross-entropy}: a logits-only model gets a loss and,
// when it has none, a targets input.
// RUN: frenzy-opt %s -frenzy-autodiff=loss=cross-entropy | FileCheck %s

// CHECK-LABEL: func @train_step
// CHECK-SAME: %[[IDS:.*]]: tensor<2x3xi64> {frenzy.name = "idx"}, %[[TGT:.*]]: tensor<2x3xi64> {frenzy.name = "targets"}
// CHECK-SAME: tensor<f32> {frenzy.name = "loss"}
// CHECK: %[[FT:.*]] = frenzy.reshape %[[TGT]] {{.*}} -> tensor<6xi64>
// CHECK: frenzy.softmax_cross_entropy_loss %{{.*}}, %[[FT]] {ignore_index = -100 : i64}
module {
  func.func @forward(%ids: tensor<2x3xi64> {frenzy.name = "idx"})
      -> (tensor<2x3x10xf32> {frenzy.name = "logits"}) {
    %w = frenzy.param "wte" {storage = "inline", trainable} : tensor<10x4xf32>
    %e = frenzy.gather %w, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    %wt = frenzy.transpose %w {perm = array<i64: 1, 0>} : (tensor<10x4xf32>) -> tensor<4x10xf32>
    %l = frenzy.matmul %e, %wt : (tensor<2x3x4xf32>, tensor<4x10xf32>) -> tensor<2x3x10xf32>
    return %l : tensor<2x3x10xf32>
  }
}
