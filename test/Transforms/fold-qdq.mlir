// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-fold-qdq))" | FileCheck %s

// QuantizeLinear/DequantizeLinear around a MatMul (uint8 activations, int8
// per-tensor weight, as ONNX Runtime's quantize_static writes it) becomes
// one static quantized_matmul on the float input: scale 0.5, zero point
// 130 - 128 = 2, the weight scale repeated per column.
// CHECK-LABEL: func @uint8_per_tensor
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1, -2, 3], [4, 5, -128]]> : tensor<2x3xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<2.500000e-01> : tensor<3xf32>
// CHECK: %[[Y:.*]] = v4f.quantized_matmul %arg0, %[[W]], %[[S]] {act_quant = "static", act_scale = 5.000000e-01 : f32, act_zero_point = 2 : i32}
// CHECK: return %[[Y]]
func.func @uint8_per_tensor(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<130> : tensor<ui8>
  %q = v4f.quantize %x, %s zero_point(%z) : (tensor<4x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x2xui8>
  %a = v4f.dequantize %q, %s zero_point(%z) : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x2xf32>
  %wq = arith.constant dense<[[1, -2, 3], [4, 5, -128]]> : tensor<2x3xi8>
  %ws = arith.constant dense<0.25> : tensor<f32>
  %w = v4f.dequantize %wq, %ws : (tensor<2x3xi8>, tensor<f32>) -> tensor<2x3xf32>
  %y = v4f.matmul %a, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// A Gemm with transB decomposes to a transpose of the dequantized [N, K]
// weight: the int8 constant is transposed at compile time and the per-row
// (axis 0) scales become per-column ones; int8 activations keep their zero
// point (act_scale 1 is the default, not printed).
// CHECK-LABEL: func @transposed_per_channel
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1, 3], [2, 4]]> : tensor<2x2xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[1.250000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK: v4f.quantized_matmul %arg0, %[[W]], %[[S]] {act_quant = "static", act_zero_point = -3 : i32}
// CHECK-NOT: v4f.transpose
func.func @transposed_per_channel(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %s = arith.constant dense<1.0> : tensor<f32>
  %z = arith.constant dense<-3> : tensor<i8>
  %q = v4f.quantize %x, %s zero_point(%z) : (tensor<1x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2xi8>
  %a = v4f.dequantize %q, %s zero_point(%z) : (tensor<1x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xf32>
  %wq = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %ws = arith.constant dense<[0.125, 0.25]> : tensor<2xf32>
  %w = v4f.dequantize %wq, %ws {axis = 0 : i64} : (tensor<2x2xi8>, tensor<2xf32>) -> tensor<2x2xf32>
  %wt = v4f.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = v4f.matmul %a, %wt : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Left as written: the DequantizeLinear's scale differs from the
// QuantizeLinear's, and a weight with a non-zero zero point.
// CHECK-LABEL: func @not_folded
// CHECK-NOT: v4f.quantized_matmul
// CHECK: v4f.matmul
// CHECK: v4f.matmul
// CHECK-NOT: v4f.quantized_matmul
func.func @not_folded(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %s = arith.constant dense<1.0> : tensor<f32>
  %s2 = arith.constant dense<2.0> : tensor<f32>
  %q = v4f.quantize %x, %s : (tensor<1x2xf32>, tensor<f32>) -> tensor<1x2xi8>
  %a = v4f.dequantize %q, %s2 : (tensor<1x2xi8>, tensor<f32>) -> tensor<1x2xf32>
  %a2 = v4f.dequantize %q, %s : (tensor<1x2xi8>, tensor<f32>) -> tensor<1x2xf32>
  %wq = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %wz = arith.constant dense<1> : tensor<i8>
  %w = v4f.dequantize %wq, %s : (tensor<2x2xi8>, tensor<f32>) -> tensor<2x2xf32>
  %w2 = v4f.dequantize %wq, %s zero_point(%wz) : (tensor<2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2xf32>
  %y = v4f.matmul %a, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %y2 = v4f.matmul %a2, %w2 : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %y, %y2 : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// A QDQ convolution (uint8 activations, int8 weight per output channel,
// axis 0) becomes v4f.quantized_conv on the float input, its float bias
// (here a dequantized int32 constant) kept as the bias operand. A grouped
// conv stays as written.
// CHECK-LABEL: func @conv_per_channel
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<2x1x1x2xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[1.250000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK: v4f.quantized_conv %arg0, %[[W]], %[[S]] bias(%{{.*}}) {act_scale = 5.000000e-01 : f32, act_zero_point = 2 : i32, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 1>, strides = array<i64: 1, 1>}
// CHECK: v4f.conv {{.*}}groups = 2
func.func @conv_per_channel(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<130> : tensor<ui8>
  %q = v4f.quantize %x, %s zero_point(%z) : (tensor<1x1x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x1x3x3xui8>
  %a = v4f.dequantize %q, %s zero_point(%z) : (tensor<1x1x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x3x3xf32>
  %wq = arith.constant dense<[[[[1, -2]]], [[[3, 4]]]]> : tensor<2x1x1x2xi8>
  %ws = arith.constant dense<[0.125, 0.25]> : tensor<2xf32>
  %w = v4f.dequantize %wq, %ws {axis = 0 : i64} : (tensor<2x1x1x2xi8>, tensor<2xf32>) -> tensor<2x1x1x2xf32>
  %bq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %bs = arith.constant dense<[0.0625, 0.125]> : tensor<2xf32>
  %b = v4f.dequantize %bq, %bs {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>) -> tensor<2xf32>
  %y = v4f.conv %a, %w bias(%b) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 1>, groups = 1 : i64}
       : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %gs = arith.constant dense<0.5> : tensor<f32>
  %gq = v4f.quantize %g, %gs : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xi8>
  %ga = v4f.dequantize %gq, %gs : (tensor<1x2x3x3xi8>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %gwq = arith.constant dense<1> : tensor<2x1x1x1xi8>
  %gw = v4f.dequantize %gwq, %gs : (tensor<2x1x1x1xi8>, tensor<f32>) -> tensor<2x1x1x1xf32>
  %gy = v4f.conv %ga, %gw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 2 : i64}
        : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  return %y, %gy : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// QOperator form: QLinearMatMul with a constant int8 weight of zero point 0
// becomes the int8 GEMM on the dequantized uint8 input (zero point 130 -
// 128 = 2) followed by a quantize to the output's scale and zero point; a
// weight with a non-zero zero point stays as written.
// CHECK-LABEL: func @qlinear_matmul
// CHECK: %[[X:.*]] = v4f.dequantize %arg0
// CHECK: %[[Y:.*]] = v4f.quantized_matmul %[[X]], %{{.*}}, %{{.*}} {act_quant = "static", act_scale = 5.000000e-01 : f32, act_zero_point = 2 : i32}
// CHECK: %[[Q:.*]] = v4f.quantize %[[Y]], %{{.*}} zero_point(%{{.*}}) : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
// CHECK: v4f.qlinear_matmul
// CHECK: return %[[Q]]
func.func @qlinear_matmul(%a: tensor<4x2xui8>) -> (tensor<4x3xui8>, tensor<4x3xui8>) {
  %sa = arith.constant dense<0.5> : tensor<f32>
  %za = arith.constant dense<130> : tensor<ui8>
  %b = arith.constant dense<[[1, -2, 3], [4, 5, -128]]> : tensor<2x3xi8>
  %sb = arith.constant dense<0.25> : tensor<f32>
  %zb = arith.constant dense<0> : tensor<i8>
  %zb1 = arith.constant dense<1> : tensor<i8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<128> : tensor<ui8>
  %y = v4f.qlinear_matmul %a, %sa, %za, %b, %sb, %zb, %sy, %zy
       : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  %y1 = v4f.qlinear_matmul %a, %sa, %za, %b, %sb, %zb1, %sy, %zy
       : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  return %y, %y1 : tensor<4x3xui8>, tensor<4x3xui8>
}

// -----

// QLinearConv (group 1, static H/W, int8 weight per output channel, int32
// bias): v4f.quantized_conv on the dequantized input with the bias in float
// (10 * 0.5 * 0.125 = 0.625, -20 * 0.5 * 0.25 = -2.5), then a quantize.
// CHECK-LABEL: func @qlinear_conv
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[6.250000e-01, -2.500000e+00]> : tensor<2xf32>
// CHECK: %[[X:.*]] = v4f.dequantize %arg0
// CHECK: %[[Y:.*]] = v4f.quantized_conv %[[X]], %{{.*}}, %{{.*}} bias(%[[B]]) {act_scale = 5.000000e-01 : f32, act_zero_point = 2 : i32
// CHECK: v4f.quantize %[[Y]]
func.func @qlinear_conv(%x: tensor<1x1x3x3xui8>) -> tensor<1x2x3x3xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<130> : tensor<ui8>
  %w = arith.constant dense<[[[[1, -2]]], [[[3, 4]]]]> : tensor<2x1x1x2xi8>
  %sw = arith.constant dense<[0.125, 0.25]> : tensor<2xf32>
  %zw = arith.constant dense<0> : tensor<2xi8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<128> : tensor<ui8>
  %b = arith.constant dense<[10, -20]> : tensor<2xi32>
  %y = v4f.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy bias(%b)
       {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 1>, group = 1 : i64}
       : (tensor<1x1x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<2x1x1x2xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x3x3xui8>
  return %y : tensor<1x2x3x3xui8>
}

// -----

// MatMulInteger with a constant weight becomes the integer GEMM: an int8
// weight as it is (no zero point: none kept), a uint8 weight as w - 128 with
// per-column zero points zp - 128 (200 - 128 = 72, 0 - 128 = -128,
// 128 - 128 = 0; zero points 128 / 130 -> 0 / 2). A run-time weight and a
// per-row lhs zero point stay for v4f-decompose-quantization.
// CHECK-LABEL: func @matmul_integer
// CHECK-DAG: %[[W8:.*]] = arith.constant dense<{{\[\[}}1, -2], [3, 4]]> : tensor<2x2xi8>
// CHECK-DAG: %[[WU:.*]] = arith.constant dense<{{\[\[}}72, -128], [0, 127]]> : tensor<2x2xi8>
// CHECK-DAG: %[[ZU:.*]] = arith.constant dense<[0, 2]> : tensor<2xi32>
// CHECK: v4f.integer_matmul %arg0, %[[W8]] lhs_zero_point(%arg1) : (tensor<3x2xui8>, tensor<2x2xi8>, tensor<ui8>) -> tensor<3x2xi32>
// CHECK: v4f.integer_matmul %arg2, %[[WU]] rhs_zero_point(%[[ZU]]) : (tensor<2x3x2xi8>, tensor<2x2xi8>, tensor<2xi32>) -> tensor<2x3x2xi32>
// CHECK: v4f.matmul_integer %arg0, %arg3
// CHECK: v4f.matmul_integer %arg0, %[[W8]] a_zero_point(%arg4)
func.func @matmul_integer(%a: tensor<3x2xui8>, %za: tensor<ui8>, %s: tensor<2x3x2xi8>, %wr: tensor<2x2xi8>, %zr: tensor<3xui8>)
    -> (tensor<3x2xi32>, tensor<2x3x2xi32>, tensor<3x2xi32>, tensor<3x2xi32>) {
  %w8 = arith.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>
  %wu = arith.constant dense<[[200, 0], [128, 255]]> : tensor<2x2xui8>
  %zu = arith.constant dense<[128, 130]> : tensor<2xui8>
  %y0 = v4f.matmul_integer %a, %w8 a_zero_point(%za) : (tensor<3x2xui8>, tensor<2x2xi8>, tensor<ui8>) -> tensor<3x2xi32>
  %y1 = v4f.matmul_integer %s, %wu b_zero_point(%zu) : (tensor<2x3x2xi8>, tensor<2x2xui8>, tensor<2xui8>) -> tensor<2x3x2xi32>
  %y2 = v4f.matmul_integer %a, %wr : (tensor<3x2xui8>, tensor<2x2xi8>) -> tensor<3x2xi32>
  %y3 = v4f.matmul_integer %a, %w8 a_zero_point(%zr) : (tensor<3x2xui8>, tensor<2x2xi8>, tensor<3xui8>) -> tensor<3x2xi32>
  return %y0, %y1, %y2, %y3 : tensor<3x2xi32>, tensor<2x3x2xi32>, tensor<3x2xi32>, tensor<3x2xi32>
}

// -----

// DequantizeLinear of a constant the integer kernels did not take becomes a
// float32 constant: (x - zp) * s, per tensor ([2, 3, 4] * 0.5) or per axis
// (axis 0, zero points 1: rows [1, 3] * 0.5 and [1, 2] * 2). A blocked one
// and one of a
// run-time value stay.
// CHECK-LABEL: func @constant_dequantize
// CHECK-DAG: arith.constant dense<[1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: arith.constant dense<{{\[\[}}5.000000e-01, 1.500000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: v4f.dequantize %arg0
// CHECK: v4f.dequantize %{{.*}} {block_size = 2 : i64}
// CHECK-NOT: v4f.dequantize
func.func @constant_dequantize(%x: tensor<3xi32>) -> (tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<4xf32>) {
  %b = arith.constant dense<[2, 3, 4]> : tensor<3xi32>
  %s = arith.constant dense<0.5> : tensor<f32>
  %y0 = v4f.dequantize %b, %s : (tensor<3xi32>, tensor<f32>) -> tensor<3xf32>
  %w = arith.constant dense<[[2, 4], [2, 3]]> : tensor<2x2xi8>
  %ws = arith.constant dense<[0.5, 2.0]> : tensor<2xf32>
  %wz = arith.constant dense<[1, 1]> : tensor<2xi8>
  %y1 = v4f.dequantize %w, %ws zero_point(%wz) {axis = 0 : i64} : (tensor<2x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2xf32>
  %y2 = v4f.dequantize %x, %s : (tensor<3xi32>, tensor<f32>) -> tensor<3xf32>
  %q = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi8>
  %qs = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y3 = v4f.dequantize %q, %qs {axis = 0 : i64, block_size = 2 : i64} : (tensor<4xi8>, tensor<2xf32>) -> tensor<4xf32>
  return %y0, %y1, %y2, %y3 : tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<4xf32>
}
