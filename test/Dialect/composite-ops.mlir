// RUN: v4f-opt %s | FileCheck %s
// RUN: v4f-opt %s | v4f-opt | FileCheck %s

// The composite ops kept whole until a v4f-decompose-* pass round-trip.

// CHECK-LABEL: func @gemm_gelu
func.func @gemm_gelu(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK: v4f.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 2.000000e+00 : f32, trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %0 = v4f.gemm %a, %b, %c {alpha = 2.0 : f32, trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: v4f.gelu %{{.*}} {approximate = "tanh"} : tensor<4x16xf32>
  %1 = v4f.gelu %0 {approximate = "tanh"} : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// CHECK-LABEL: func @quantize_dequantize
func.func @quantize_dequantize(%x: tensor<2x6xf32>, %s: tensor<2x3xf32>, %z: tensor<2x3xi8>) -> tensor<2x6xf16> {
  // CHECK: v4f.quantize %{{.*}}, %{{.*}} zero_point(%{{.*}}) {axis = 1 : i64, block_size = 2 : i64, precision = f64, saturate = false}
  %q = v4f.quantize %x, %s zero_point(%z) {axis = 1 : i64, block_size = 2 : i64, saturate = false, precision = f64}
       : (tensor<2x6xf32>, tensor<2x3xf32>, tensor<2x3xi8>) -> tensor<2x6xi8>
  // CHECK: v4f.dequantize %{{.*}}, %{{.*}} zero_point(%{{.*}}) {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x6xi8>, tensor<2x3xf32>, tensor<2x3xi8>) -> tensor<2x6xf16>
  %d = v4f.dequantize %q, %s zero_point(%z) {axis = 1 : i64, block_size = 2 : i64}
       : (tensor<2x6xi8>, tensor<2x3xf32>, tensor<2x3xi8>) -> tensor<2x6xf16>
  return %d : tensor<2x6xf16>
}

// CHECK-LABEL: func @integer_products
func.func @integer_products(%a: tensor<4x8xui8>, %b: tensor<8xi8>, %za: tensor<4xui8>, %s: tensor<f32>, %zu: tensor<ui8>,
                            %x: tensor<1x2x5x5xi8>, %w: tensor<3x2x3x3xi8>, %zi: tensor<i8>, %bias: tensor<3xi32>)
    -> (tensor<4xi32>, tensor<4x8xui8>, tensor<1x3x3x3xi32>, tensor<1x3x3x3xi8>) {
  // CHECK: v4f.matmul_integer %{{.*}}, %{{.*}} a_zero_point(%{{.*}}) : (tensor<4x8xui8>, tensor<8xi8>, tensor<4xui8>) -> tensor<4xi32>
  %0 = v4f.matmul_integer %a, %b a_zero_point(%za) : (tensor<4x8xui8>, tensor<8xi8>, tensor<4xui8>) -> tensor<4xi32>
  // CHECK: v4f.qlinear_matmul {{.*}} : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x8xui8>, tensor<f32>, tensor<ui8>, tensor<f32>) -> tensor<4x8xui8>
  %sq = arith.constant dense<1> : tensor<8x8xui8>
  %1 = v4f.qlinear_matmul %a, %s, %zu, %sq, %s, %zu, %s : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x8xui8>, tensor<f32>, tensor<ui8>, tensor<f32>) -> tensor<4x8xui8>
  // CHECK: v4f.conv_integer %{{.*}}, %{{.*}} w_zero_point(%{{.*}}) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
  %2 = v4f.conv_integer %x, %w w_zero_point(%zi) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x5x5xi8>, tensor<3x2x3x3xi8>, tensor<i8>) -> tensor<1x3x3x3xi32>
  // CHECK: v4f.qlinear_conv {{.*}} bias(%{{.*}}) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
  %3 = v4f.qlinear_conv %x, %s, %zi, %w, %s, %zi, %s, %zi bias(%bias) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64}
       : (tensor<1x2x5x5xi8>, tensor<f32>, tensor<i8>, tensor<3x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<1x3x3x3xi8>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4x8xui8>, tensor<1x3x3x3xi32>, tensor<1x3x3x3xi8>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x3x16xf32>, %k: tensor<2x3x8xf32>, %pk: tensor<2x2x5x4xf32>, %m: tensor<3x8xi1>)
    -> (tensor<2x3x16xf32>, tensor<2x2x8x4xf32>) {
  // CHECK: v4f.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) past(%{{.*}}, %{{.*}}) {is_causal = true, kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 5.000000e-01 : f32}
  %y, %pk2, %pv2, %qk = v4f.attention %q, %k, %k mask(%m) past(%pk, %pk)
      {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.5 : f32, is_causal = true}
      : (tensor<2x3x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<3x8xi1>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>)
      -> (tensor<2x3x16xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x4x3x8xf32>)
  return %y, %pk2 : tensor<2x3x16xf32>, tensor<2x2x8x4xf32>
}

// CHECK-LABEL: func @recurrent
func.func @recurrent(%x: tensor<5x2x4xf32>, %w: tensor<2x12x4xf32>, %r: tensor<2x12x3xf32>, %lens: tensor<2xi32>)
    -> (tensor<5x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>) {
  // CHECK: v4f.recurrent %{{.*}}, %{{.*}}, %{{.*}} sequence_lens(%{{.*}}) {activation_alpha = array<f32: 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00>
  // CHECK-SAME: cell = "lstm", clip = 2.000000e+00 : f32, direction = "bidirectional"
  %y, %yh, %yc = v4f.recurrent %x, %w, %r sequence_lens(%lens)
      {cell = "lstm", direction = "bidirectional", hidden_size = 3 : i64, clip = 2.0 : f32,
       activations = ["sigmoid", "tanh", "tanh", "sigmoid", "tanh", "tanh"],
       activation_alpha = array<f32: 0.0, 0.0, 0.0, 0.0, 0.0, 0.0>, activation_beta = array<f32: 0.0, 0.0, 0.0, 0.0, 0.0, 0.0>}
      : (tensor<5x2x4xf32>, tensor<2x12x4xf32>, tensor<2x12x3xf32>, tensor<2xi32>)
      -> (tensor<5x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>)
  return %y, %yh, %yc : tensor<5x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>
}
