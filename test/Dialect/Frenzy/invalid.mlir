// Verifier messages for malformed frenzy ops.
// RUN: frenzy-opt %s -split-input-file -verify-diagnostics

func.func @bad_storage() -> tensor<4xf32> {
  // expected-error @+1 {{storage must be 'inline', 'constant' or 'external', got 'disk'}}
  %0 = frenzy.param "w" {storage = "disk"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @external_without_file() -> tensor<4xf32> {
  // expected-error @+1 {{a 'file' is given exactly when storage is 'external'}}
  %0 = frenzy.param "w" {storage = "external", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @external_wrong_length() -> tensor<4xf32> {
  // expected-error @+1 {{external data length 12 does not match the 16 bytes of the parameter type}}
  %0 = frenzy.param "w" {storage = "external", file = "d", offset = 0 : i64, length = 12 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dynamic_param() -> tensor<?xf32> {
  // expected-error @+1 {{parameter shape must be static}}
  %0 = frenzy.param "w" {storage = "inline"} : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dims differ: 3 vs 4}}
  %0 = frenzy.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_result(%a: tensor<8x2x3xf32>, %b: tensor<3x5xf32>) -> tensor<8x2x6xf32> {
  // expected-error @+1 {{result shape [8, 2, 6] does not match the expected [8, 2, 5]}}
  %0 = frenzy.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x5xf32>) -> tensor<8x2x6xf32>
  return %0 : tensor<8x2x6xf32>
}

// -----

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operands don't have broadcast-compatible shapes}}
  %0 = frenzy.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = frenzy.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale shape [4] does not match the expected [8]}}
  %0 = frenzy.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x8xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{reshape from [2, 8] to [3, 5] changes the element count}}
  %0 = frenzy.reshape %x : (tensor<2x8xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x8xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = frenzy.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

func.func @split_sizes(%x: tensor<2x9xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{split sizes add up to 8, not the input's 9}}
  %0, %1 = frenzy.split %x {axis = 1 : i64} : (tensor<2x9xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %0 : tensor<2x4xf32>
}

// -----

func.func @squeeze_non_unit(%x: tensor<2x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{cannot squeeze dim 0 of size 2}}
  %0 = frenzy.squeeze %x {axes = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @gather_float_indices(%d: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{indices must be integers}}
  %0 = frenzy.gather %d, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @attention_head_dim(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  // expected-error @+1 {{q and k head dims differ: 8 vs 16}}
  %0 = frenzy.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<2x4x16x8xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// -----

func.func @loss_labels(%l: tensor<32x16xf32>, %t: tensor<31xi64>) -> tensor<f32> {
  // expected-error @+1 {{labels shape [31] does not match the expected [32]}}
  %0 = frenzy.softmax_cross_entropy_loss %l, %t : (tensor<32x16xf32>, tensor<31xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @gelu_mode(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{approximate must be 'none' or 'tanh'}}
  %0 = frenzy.gelu %x {approximate = "fast"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{ratio must be in [0, 1)}}
  %0 = frenzy.dropout %x {ratio = 1.5 : f64, training = true} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{expected 'embed', 'head' or a layer index}}
func.func @bad_block() attributes {b = #frenzy.block<middle>} {
  return
}
