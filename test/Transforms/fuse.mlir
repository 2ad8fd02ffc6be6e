// frenzy-fuse: decomposed GELU, LayerNorm, RMSNorm, SiLU/SwiGLU, attention.
// RUN: frenzy-opt %s -split-input-file -frenzy-fuse | FileCheck %s

// GELU tanh as torch 1.13 writes it (x*x*x, constants on the left).
// CHECK-LABEL: func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = frenzy.gelu %arg0 {approximate = "tanh"} : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = frenzy.constant dense<0.044715> : tensor<f32>
  %c1 = frenzy.constant dense<0.797884583> : tensor<f32>
  %one = frenzy.constant dense<1.0> : tensor<f32>
  %half = frenzy.constant dense<0.5> : tensor<f32>
  %0 = frenzy.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = frenzy.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = frenzy.mul %c0, %1 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = frenzy.add %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = frenzy.mul %c1, %3 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = frenzy.tanh %4 : tensor<4x8xf32>
  %6 = frenzy.add %one, %5 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = frenzy.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = frenzy.mul %half, %7 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// GELU erf (nn.GELU(), BERT): x * 0.5 * (1 + erf(x / sqrt 2)), with pow.
// CHECK-LABEL: func @gelu_erf
// CHECK-NEXT: frenzy.gelu %arg0 : tensor<4x8xf32>
// CHECK-NOT: frenzy.erf
func.func @gelu_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s2 = frenzy.constant dense<1.41421354> : tensor<f32>
  %one = frenzy.constant dense<1.0> : tensor<f32>
  %half = frenzy.constant dense<0.5> : tensor<f32>
  %0 = frenzy.div %x, %s2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = frenzy.erf %0 : tensor<4x8xf32>
  %2 = frenzy.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = frenzy.mul %x, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = frenzy.mul %3, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// Not a GELU: the wrong cubic coefficient stays decomposed.
// CHECK-LABEL: func @not_gelu
// CHECK-NOT: frenzy.gelu
// CHECK: frenzy.tanh
func.func @not_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = frenzy.constant dense<0.5> : tensor<f32>
  %c1 = frenzy.constant dense<0.797884583> : tensor<f32>
  %three = frenzy.constant dense<3.0> : tensor<f32>
  %one = frenzy.constant dense<1.0> : tensor<f32>
  %half = frenzy.constant dense<0.5> : tensor<f32>
  %0 = frenzy.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = frenzy.mul %c0, %0 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = frenzy.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = frenzy.mul %c1, %3 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = frenzy.tanh %4 : tensor<4xf32>
  %6 = frenzy.add %one, %5 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = frenzy.mul %x, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = frenzy.mul %half, %7 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %8 : tensor<4xf32>
}

// -----

// LayerNorm below opset 17: mean, centre, variance, sqrt, divide, affine.
// CHECK-LABEL: func @layer_norm
// CHECK: %[[LN:.*]] = frenzy.layer_norm %arg0, %arg1, %arg2 {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: return %[[LN]]
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = frenzy.constant dense<2.0> : tensor<f32>
  %eps = frenzy.constant dense<1.0e-5> : tensor<f32>
  %m = frenzy.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = frenzy.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %p = frenzy.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v = frenzy.reduce_mean %p {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = frenzy.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = frenzy.sqrt %ve : tensor<4x1xf32>
  %n = frenzy.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = frenzy.mul %n, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = frenzy.add %y, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// RMSNorm as Llama writes it: x * rsqrt(mean(x^2) + eps) * w.
// CHECK-LABEL: func @rms_norm
// CHECK: %[[R:.*]] = frenzy.rms_norm %arg0, %arg1 {axis = 2 : i64, epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NEXT: return %[[R]]
func.func @rms_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %two = frenzy.constant dense<2.0> : tensor<f32>
  %eps = frenzy.constant dense<1.0e-6> : tensor<f32>
  %p = frenzy.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %v = frenzy.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %ve = frenzy.add %v, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %s = frenzy.sqrt %ve : tensor<2x4x1xf32>
  %r = frenzy.reciprocal %s : tensor<2x4x1xf32>
  %n = frenzy.mul %x, %r : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %y = frenzy.mul %w, %n : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// SiLU then SwiGLU: down(silu(gate(x)) * up(x)).
// CHECK-LABEL: func @swiglu
// CHECK: %[[S:.*]] = frenzy.swiglu %arg0, %arg1 : tensor<4x16xf32>
// CHECK-NEXT: return %[[S]]
func.func @swiglu(%g: tensor<4x16xf32>, %u: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = frenzy.sigmoid %g : tensor<4x16xf32>
  %a = frenzy.mul %g, %s : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = frenzy.mul %a, %u : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A SiLU that is not gated stays a SiLU.
// CHECK-LABEL: func @silu
// CHECK: frenzy.silu %arg0
// CHECK-NOT: frenzy.swiglu
func.func @silu(%g: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = frenzy.sigmoid %g : tensor<4x16xf32>
  %a = frenzy.mul %s, %g : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %a : tensor<4x16xf32>
}

// -----

// nanoGPT attention: q @ k^T (k transposed from [B,T,H,D]), scaled,
// boolean mask through where(-inf), softmax, dropout, @ v.
// CHECK-LABEL: func @attention_where_mask
// CHECK: %[[K:.*]] = frenzy.transpose %arg1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK: %[[A:.*]] = frenzy.attention %arg0, %[[K]], %arg2, %arg3 {dropout = 1.000000e-01 : f64, scale = 0.3535533{{[0-9]+}} : f64}
// CHECK-NOT: frenzy.softmax
// CHECK: return %[[A]]
func.func @attention_where_mask(%q: tensor<2x4x16x8xf32>, %kr: tensor<2x16x4x8xf32>, %v: tensor<2x4x16x8xf32>,
                                %mask: tensor<1x1x16x16xi1>) -> tensor<2x4x16x8xf32> {
  %scale = frenzy.constant dense<0.353553385> : tensor<f32>
  %ninf = frenzy.constant dense<0xFF800000> : tensor<f32>
  %kt = frenzy.transpose %kr {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x16x4x8xf32>) -> tensor<2x4x8x16xf32>
  %s = frenzy.matmul %q, %kt : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %ss = frenzy.mul %s, %scale : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %m = frenzy.where %mask, %ninf, %ss : (tensor<1x1x16x16xi1>, tensor<f32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = frenzy.softmax %m {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %pd = frenzy.dropout %p {ratio = 0.1 : f64, training = true} : tensor<2x4x16x16xf32>
  %o = frenzy.matmul %pd, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Additive causal mask from trilu and q scaled before the product
// (torch.nn.MultiheadAttention divides q).
// CHECK-LABEL: func @attention_additive_causal
// CHECK: frenzy.attention %arg0, %{{.*}}, %arg2, %{{.*}} {causal, scale = 1.250000e-01 : f64}
func.func @attention_additive_causal(%q: tensor<8x16x64xf32>, %k: tensor<8x16x64xf32>, %v: tensor<8x16x64xf32>) -> tensor<8x16x64xf32> {
  %c8 = frenzy.constant dense<8.0> : tensor<f32>
  %full = frenzy.constant dense<0xFF800000> : tensor<16x16xf32>
  %mask = frenzy.trilu %full {upper = true, k = 1 : i64} : tensor<16x16xf32>
  %qs = frenzy.div %q, %c8 : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16x64xf32>
  %kt = frenzy.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<8x16x64xf32>) -> tensor<8x64x16xf32>
  %s = frenzy.matmul %qs, %kt : (tensor<8x16x64xf32>, tensor<8x64x16xf32>) -> tensor<8x16x16xf32>
  %m = frenzy.add %s, %mask : (tensor<8x16x16xf32>, tensor<16x16xf32>) -> tensor<8x16x16xf32>
  %p = frenzy.softmax %m {axis = 2 : i64} : tensor<8x16x16xf32>
  %o = frenzy.matmul %p, %v : (tensor<8x16x16xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A softmax over a non-last axis is not attention.
// CHECK-LABEL: func @not_attention
// CHECK-NOT: frenzy.attention
func.func @not_attention(%a: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %p = frenzy.softmax %a {axis = 0 : i64} : tensor<4x4xf32>
  %o = frenzy.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}
