// RUN: frenzy-opt %s -frenzy-eval-mode | FileCheck %s
// Inference turns dropout off: training = false on dropouts, dropout 0 on
// attention.
func.func @f(%x: tensor<2x4xf32>, %q: tensor<1x2x4x8xf32>) -> (tensor<2x4xf32>, tensor<1x2x4x8xf32>) {
  // CHECK: frenzy.dropout %{{.*}} {ratio = 1.000000e-01 : f64, training = false}
  %0 = frenzy.dropout %x {ratio = 0.1 : f64, training = true} : tensor<2x4xf32>
  // CHECK: frenzy.attention %{{.*}} {causal, scale = 3.500000e-01 : f64}
  %1 = frenzy.attention %q, %q, %q {scale = 0.35 : f64, causal, dropout = 0.1 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<1x2x4x8xf32>
}
