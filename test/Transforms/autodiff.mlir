// frenzy-autodiff: the training graph of a forward function with a loss.
// RUN: frenzy-opt %s -split-input-file -frenzy-autodiff -verify-diagnostics | FileCheck %s

// A tied weight: used by the embedding gather and the head matmul; the two
// contributions add. The non-trainable mask gets no gradient, the integer
// ids none either; the gradient becomes a named result.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {frenzy.name = "loss"}, tensor<10x4xf32> {frenzy.grad_of = "wte", frenzy.name = "grad.wte"})
// CHECK: %[[SEED:.*]] = frenzy.constant {frenzy.backward} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DL:.*]] = frenzy.cross_entropy_grad %[[SEED]]
// CHECK: %[[HEAD:.*]] = frenzy.gemm {{.*}}transA = true
// CHECK: %[[T:.*]] = frenzy.transpose %[[HEAD]]
// CHECK: %[[EMB:.*]] = frenzy.gather_grad
// CHECK: %[[SUM:.*]] = frenzy.add %[[T]], %[[EMB]] {frenzy.backward}
// CHECK: return {{.*}}, %[[SUM]]
module {
  func.func @forward(%ids: tensor<2x3xi64> {frenzy.name = "idx"},
                     %tgt: tensor<6xi64> {frenzy.name = "targets"})
      -> (tensor<f32> {frenzy.name = "loss"}) {
    %w = frenzy.param "wte" {storage = "inline", trainable} : tensor<10x4xf32>
    %e = frenzy.gather %w, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    %wt = frenzy.transpose %w {perm = array<i64: 1, 0>} : (tensor<10x4xf32>) -> tensor<4x10xf32>
    %l = frenzy.matmul %e, %wt : (tensor<2x3x4xf32>, tensor<4x10xf32>) -> tensor<2x3x10xf32>
    %r = frenzy.reshape %l : (tensor<2x3x10xf32>) -> tensor<6x10xf32>
    %loss = frenzy.softmax_cross_entropy_loss %r, %tgt : (tensor<6x10xf32>, tensor<6xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Broadcast operands are summed back to their shape; training dropouts get
// distinct seeds, and the backward dropout reuses the forward one's. The
// input %x needs no gradient, so the first dropout has no backward.
// CHECK-LABEL: func @train_step
// CHECK: frenzy.dropout %{{.*}} {ratio = 1.000000e-01 : f64, seed = 1 : i64, training = true}
// CHECK: frenzy.dropout %{{.*}} {ratio = 1.000000e-01 : f64, seed = 2 : i64, training = true}
// CHECK: frenzy.dropout %{{.*}} {frenzy.backward, ratio = 1.000000e-01 : f64, seed = 2 : i64, training = true}
// CHECK: frenzy.unbroadcast %{{.*}} {frenzy.backward} : (tensor<2x4xf32>) -> tensor<4xf32>
// CHECK-NOT: seed = 1 : i64, training = true} : tensor<2x4xf32>
// CHECK: return
module {
  func.func @forward(%x: tensor<2x4xf32>) -> (tensor<f32> {frenzy.name = "loss"}) {
    %b = frenzy.param "bias" {storage = "inline", trainable} : tensor<4xf32>
    %d0 = frenzy.dropout %x {ratio = 0.1 : f64, training = true} : tensor<2x4xf32>
    %a = frenzy.add %d0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %d1 = frenzy.dropout %a {ratio = 0.1 : f64, training = true} : tensor<2x4xf32>
    %s = frenzy.reduce_sum %d1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// An op with no gradient rule on the path from a parameter to the loss.
module {
  func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {frenzy.name = "loss"}) {
    %w = frenzy.param "w" {storage = "inline", trainable} : tensor<4xf32>
    %m = frenzy.reduce_max %w {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    // expected-error @-1 {{no gradient rule for 'frenzy.reduce_max' on the path from parameter 'w' to the loss}}
    return %m : tensor<f32>
  }
}

// -----

// No loss and no --loss: say how to add one.
// expected-error @+2 {{the model has no scalar loss output}}
module {
  func.func @forward(%x: tensor<2x4xf32>) -> (tensor<2x4xf32> {frenzy.name = "logits"}) {
    %w = frenzy.param "w" {storage = "inline", trainable} : tensor<4xf32>
    %a = frenzy.add %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    return %a : tensor<2x4xf32>
  }
}
