// frenzy-optimizer: gradients become clip + in-place updates.
// RUN: frenzy-opt %s -frenzy-optimizer="optimizer=adamw lr=0.001 weight-decay=0.1 clip-norm=1.0 warmup-steps=10 total-steps=100" | FileCheck %s
// RUN: frenzy-opt %s -frenzy-optimizer="optimizer=sgd" | FileCheck %s --check-prefix=SGD
// RUN: not frenzy-opt %s -frenzy-optimizer="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: frenzy.optimizer = {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, clip_norm = 1.000000e+00 : f64, eps = 1.000000e-08 : f64, kind = "adamw", lr = 1.000000e-03 : f64, min_lr = 0.000000e+00 : f64, total_steps = 100 : i64, warmup_steps = 10 : i64}
// CHECK: func @train_step({{.*}}) -> (tensor<f32> {frenzy.name = "loss"}, tensor<f32> {frenzy.name = "grad_norm"})
// CHECK: %[[W:.*]] = frenzy.param "w"
// CHECK: %[[B:.*]] = frenzy.param "b"
// CHECK: %[[NORM:.*]], %[[SCALE:.*]] = frenzy.clip_grad_norm %{{.*}}, %{{.*}} {max_norm = 1.000000e+00 : f64}
// Matrices decay, vectors do not.
// CHECK: frenzy.adamw_update %[[W]], %{{.*}}, %[[SCALE]] {name = "w", weight_decay = 1.000000e-01 : f64}
// CHECK: frenzy.adamw_update %[[B]], %{{.*}}, %[[SCALE]] {name = "b", weight_decay = 0.000000e+00 : f64}
// CHECK: return %{{.*}}, %[[NORM]]
// SGD: momentum = 9.000000e-01
// SGD: frenzy.sgd_update
// BAD: unknown optimizer 'lion'; valid values: adamw, sgd
module {
  func.func @train_step(%x: tensor<2x4xf32>) -> (tensor<f32> {frenzy.name = "loss"}, tensor<4x4xf32> {frenzy.grad_of = "w", frenzy.name = "grad.w"}, tensor<4xf32> {frenzy.grad_of = "b", frenzy.name = "grad.b"}) {
    %w = frenzy.param "w" {storage = "inline", trainable} : tensor<4x4xf32>
    %b = frenzy.param "b" {storage = "inline", trainable} : tensor<4xf32>
    %l = frenzy.constant dense<1.0> : tensor<f32>
    %gw = frenzy.constant dense<0.5> : tensor<4x4xf32>
    %gb = frenzy.constant dense<0.5> : tensor<4xf32>
    return %l, %gw, %gb : tensor<f32>, tensor<4x4xf32>, tensor<4xf32>
  }
}
