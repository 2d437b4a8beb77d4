// RUN: v4f-opt %s -split-input-file -v4f-decompose-quantization | FileCheck %s

// Per-axis scale and zero point reshaped to broadcast along axis 1; one
// elementwise divides, rounds half to even, adds the zero point, saturates.
// CHECK-LABEL: func @quantize_per_axis
// CHECK: %[[S:.*]] = v4f.reshape %arg1 {dim_sources = array<i64: -1, 0>} : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK: %[[Z:.*]] = v4f.reshape %arg2 {dim_sources = array<i64: -1, 0>} : (tensor<3xi8>) -> tensor<1x3xi8>
// CHECK: %[[Q:.*]] = v4f.elementwise %arg0, %[[S]], %[[Z]] : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x3xi8>) -> tensor<2x3xi8>
// CHECK: arith.divf
// CHECK: math.roundeven
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK-NOT: v4f.quantize
// CHECK: return %[[Q]]
func.func @quantize_per_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xi8>) -> tensor<2x3xi8> {
  %q = v4f.quantize %x, %s zero_point(%z) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
  return %q : tensor<2x3xi8>
}

// -----

// Blocked scale [2, 3] with block_size 2 along a dim of 5: repeated to
// [2, 6] and the partial last block's excess split off.
// CHECK-LABEL: func @quantize_blocked
// CHECK: %[[ONES:.*]] = arith.constant dense<false> : tensor<1x1x2xi1>
// CHECK: %[[S3:.*]] = v4f.reshape %arg1 {{.*}} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[SR:.*]] = v4f.elementwise %[[S3]], %[[ONES]] : (tensor<2x3x1xf32>, tensor<1x1x2xi1>) -> tensor<2x3x2xf32>
// CHECK: %[[S6:.*]] = v4f.reshape %[[SR]] {{.*}} -> tensor<2x6xf32>
// CHECK: %[[S:.*]]:2 = v4f.split %[[S6]] {axis = 1 : i64, sizes = array<i64: 5, 1>}
// CHECK: v4f.elementwise %arg0, %[[S]]#0 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xui8>
func.func @quantize_blocked(%x: tensor<2x5xf32>, %s: tensor<2x3xf32>) -> tensor<2x5xui8> {
  %q = v4f.quantize %x, %s {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x5xui8>
  return %q : tensor<2x5xui8>
}

// -----

// float8 target: the E4M3FN encode (largest finite value 448) of x / scale.
// CHECK-LABEL: func @quantize_float8
// CHECK: v4f.elementwise %arg0, %arg1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf8E4M3FN>
// CHECK: arith.divf
// CHECK: arith.constant 4.480000e+02 : f32
// CHECK: v4f.yield %{{.*}} : i8
func.func @quantize_float8(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf8E4M3FN> {
  %q = v4f.quantize %x, %s {saturate = false} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

// (x - zero_point) in integers, to float32, times the scale.
// CHECK-LABEL: func @dequantize
// CHECK: v4f.elementwise %arg0, %arg1, %arg2 : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.subi
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.mulf
// CHECK-NOT: v4f.dequantize
func.func @dequantize(%x: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3xf32> {
  %y = v4f.dequantize %x, %s zero_point(%z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// uint8 x int8 with K = 600 and a run-time zero point: a partial sum could
// reach 255 * 128 * 600 > 2^24, so K splits into exact chunks of 514 and 86
// whose float32 results are summed in int32.
// CHECK-LABEL: func @matmul_integer_split
// CHECK: %[[A:.*]] = v4f.elementwise %arg0, %arg2 : (tensor<4x600xui8>, tensor<ui8>) -> tensor<4x600xf32>
// CHECK: %[[B:.*]] = v4f.elementwise %arg1 : (tensor<600x5xi8>) -> tensor<600x5xf32>
// CHECK: %[[AS:.*]]:2 = v4f.split %[[A]] {axis = 1 : i64, sizes = array<i64: 514, 86>}
// CHECK: %[[BS:.*]]:2 = v4f.split %[[B]] {axis = 0 : i64, sizes = array<i64: 514, 86>}
// CHECK: %[[M0:.*]] = v4f.matmul %[[AS]]#0, %[[BS]]#0 : (tensor<4x514xf32>, tensor<514x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[M1:.*]] = v4f.matmul %[[AS]]#1, %[[BS]]#1 : (tensor<4x86xf32>, tensor<86x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[Y:.*]] = v4f.elementwise %[[M0]], %[[M1]] : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi32>
// CHECK: arith.fptosi
// CHECK: arith.addi
// CHECK: return %[[Y]]
func.func @matmul_integer_split(%a: tensor<4x600xui8>, %b: tensor<600x5xi8>, %za: tensor<ui8>) -> tensor<4x5xi32> {
  %y = v4f.matmul_integer %a, %b a_zero_point(%za) : (tensor<4x600xui8>, tensor<600x5xi8>, tensor<ui8>) -> tensor<4x5xi32>
  return %y : tensor<4x5xi32>
}

// -----

// A constant zero point of 128 bounds |a - za| by 128: 128 * 128 * 600 < 2^24,
// so one matmul is exact.
// CHECK-LABEL: func @matmul_integer_constant_zp
// CHECK-NOT: v4f.split
// CHECK: %[[M:.*]] = v4f.matmul %{{.*}}, %{{.*}} : (tensor<4x600xf32>, tensor<600x5xf32>) -> tensor<4x5xf32>
// CHECK: v4f.elementwise %[[M]] : (tensor<4x5xf32>) -> tensor<4x5xi32>
func.func @matmul_integer_constant_zp(%a: tensor<4x600xui8>, %b: tensor<600x5xi8>) -> tensor<4x5xi32> {
  %za = arith.constant dense<128> : tensor<ui8>
  %y = v4f.matmul_integer %a, %b a_zero_point(%za) : (tensor<4x600xui8>, tensor<600x5xi8>, tensor<ui8>) -> tensor<4x5xi32>
  return %y : tensor<4x5xi32>
}

// -----

// Per-row a_scale [2] -> [2, 1]; the requantization computes in float64.
// CHECK-LABEL: func @qlinear_matmul
// CHECK: %[[SA:.*]] = v4f.reshape %arg1 {dim_sources = array<i64: 0, -1>} : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK: %[[M:.*]] = v4f.matmul %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[ACC:.*]] = v4f.elementwise %[[M]] : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK: v4f.elementwise %[[ACC]], %[[SA]], %arg4, %arg6, %arg7 : (tensor<2x3xi32>, tensor<2x1xf32>, tensor<f32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: math.roundeven %{{.*}} : f64
func.func @qlinear_matmul(%a: tensor<2x4xui8>, %sa: tensor<2xf32>, %za: tensor<ui8>, %b: tensor<4x3xui8>, %sb: tensor<f32>, %zb: tensor<ui8>, %sy: tensor<f32>, %zy: tensor<ui8>) -> tensor<2x3xui8> {
  %y = v4f.qlinear_matmul %a, %sa, %za, %b, %sb, %zb, %sy, %zy : (tensor<2x4xui8>, tensor<2xf32>, tensor<ui8>, tensor<4x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %y : tensor<2x3xui8>
}

// -----

// 30 uint8 input channels per group exceed the exact chunk of 28
// (2^24 / (255 * 255 * 9)): each group's channels split into 28 + 2, x viewed
// as [N, group, C/group, H, W]; two grouped convs summed in int32.
// CHECK-LABEL: func @conv_integer_grouped_split
// CHECK: %[[ZW:.*]] = v4f.reshape %arg3 {{.*}} : (tensor<4xui8>) -> tensor<4x1x1x1xui8>
// CHECK: %[[X:.*]] = v4f.elementwise %arg0, %arg2
// CHECK: %[[W:.*]] = v4f.elementwise %arg1, %[[ZW]]
// CHECK: %[[XG:.*]] = v4f.reshape %[[X]] {{.*}} -> tensor<1x2x30x5x5xf32>
// CHECK: %[[XS:.*]]:2 = v4f.split %[[XG]] {axis = 2 : i64, sizes = array<i64: 28, 2>}
// CHECK: %[[WS:.*]]:2 = v4f.split %[[W]] {axis = 1 : i64, sizes = array<i64: 28, 2>}
// CHECK: %[[X0:.*]] = v4f.reshape %[[XS]]#0 {{.*}} -> tensor<1x56x5x5xf32>
// CHECK: %[[C0:.*]] = v4f.conv %[[X0]], %[[WS]]#0 {dilations = array<i64: 1, 1>, groups = 2 : i64
// CHECK: %[[X1:.*]] = v4f.reshape %[[XS]]#1 {{.*}} -> tensor<1x4x5x5xf32>
// CHECK: %[[C1:.*]] = v4f.conv %[[X1]], %[[WS]]#1 {dilations = array<i64: 1, 1>, groups = 2 : i64
// CHECK: v4f.elementwise %[[C0]], %[[C1]] : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xi32>
func.func @conv_integer_grouped_split(%x: tensor<1x60x5x5xui8>, %w: tensor<4x30x3x3xui8>, %zx: tensor<ui8>, %zw: tensor<4xui8>) -> tensor<1x4x3x3xi32> {
  %y = v4f.conv_integer %x, %w x_zero_point(%zx) w_zero_point(%zw) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x60x5x5xui8>, tensor<4x30x3x3xui8>, tensor<ui8>, tensor<4xui8>) -> tensor<1x4x3x3xi32>
  return %y : tensor<1x4x3x3xi32>
}

// -----

// Per-channel weight zero point and scale; the int32 bias is added to the
// accumulator before the float64 requantization.
// CHECK-LABEL: func @qlinear_conv_bias
// CHECK: %[[ZW:.*]] = v4f.reshape %arg5 {{.*}} -> tensor<3x1x1x1xi8>
// CHECK: %[[SW:.*]] = v4f.reshape %arg4 {{.*}} -> tensor<3x1x1xf32>
// CHECK: %[[C:.*]] = v4f.conv
// CHECK: %[[ACC:.*]] = v4f.elementwise %[[C]] : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xi32>
// CHECK: %[[B:.*]] = v4f.reshape %arg8 {{.*}} : (tensor<3xi32>) -> tensor<3x1x1xi32>
// CHECK: %[[AB:.*]] = v4f.elementwise %[[ACC]], %[[B]]
// CHECK: arith.addi
// CHECK: v4f.elementwise %[[AB]], %arg1, %[[SW]], %arg6, %arg7 : {{.*}} -> tensor<1x3x3x3xi8>
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK-NOT: v4f.qlinear_conv
func.func @qlinear_conv_bias(%x: tensor<1x2x4x4xi8>, %sx: tensor<f32>, %zx: tensor<i8>, %w: tensor<3x2x2x2xi8>, %sw: tensor<3xf32>, %zw: tensor<3xi8>, %sy: tensor<f32>, %zy: tensor<i8>, %bias: tensor<3xi32>) -> tensor<1x3x3x3xi8> {
  %y = v4f.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy bias(%bias) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<3x2x2x2xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<1x3x3x3xi8>
  return %y : tensor<1x3x3x3xi8>
}
