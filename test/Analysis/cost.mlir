// CostOpInterface conventions: a multiply-add is 2 flops, data movement is
// free, bytes are operand and result sizes (i1 counts one byte).
// RUN: frenzy-opt %s -frenzy-test-print-cost -verify-diagnostics -o /dev/null

func.func @cost(%x: tensor<2x16x64xf32>, %w: tensor<64x128xf32>, %q: tensor<2x4x16x16xf32>,
                %m: tensor<16x16xi1>, %ids: tensor<2x16xi64>, %e: tensor<100x64xbf16>) {
  // 2 * 64 * (2*16*128) = 524288; read 8192+32768 B, written 16384 B.
  // expected-remark @+1 {{flops 524288, read 40960 B, written 16384 B}}
  %0 = frenzy.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x128xf32>) -> tensor<2x16x128xf32>
  // 9 per element for the tanh form.
  // expected-remark @+1 {{flops 36864, read 16384 B, written 16384 B}}
  %1 = frenzy.gelu %0 {approximate = "tanh"} : tensor<2x16x128xf32>
  // scores 2*4*16*16 = 2048: 2*2048*16 twice + 6*2048.
  // expected-remark @+1 {{flops 143360, read 24832 B, written 8192 B}}
  %2 = frenzy.attention %q, %q, %q, %m {scale = 0.25 : f64} : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<16x16xi1>) -> tensor<2x4x16x16xf32>
  // expected-remark @+1 {{flops 0, read 8192 B, written 8192 B}}
  %3 = frenzy.transpose %2 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
  // A gather reads its indices and the rows it takes, not the whole table.
  // expected-remark @+1 {{flops 0, read 4352 B, written 4096 B}}
  %4 = frenzy.gather %e, %ids {axis = 0 : i64} : (tensor<100x64xbf16>, tensor<2x16xi64>) -> tensor<2x16x64xbf16>
  // expected-remark @+1 {{flops 16384, read 16384 B, written 8192 B}}
  %5 = frenzy.layer_norm %x, %x {axis = 0 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{flops 0, read 0 B, written 512 B}}
  %6 = frenzy.param "p" {storage = "inline"} : tensor<128xf32>
  return
}
