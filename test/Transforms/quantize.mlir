// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-quantize{mode=dynamic-int8 exclude=keep_me per-channel=1}))" | FileCheck %s
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-quantize{mode=int8}))" | FileCheck %s --check-prefix=STATIC
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-quantize{mode=dynamic-int8}))" | FileCheck %s --check-prefix=TENSOR
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-quantize{mode=int4-weight group-size=2}))" | FileCheck %s --check-prefix=INT4
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-quantize{mode=int4-weight group-size=2 int4-zero-points=1}))" | FileCheck %s --check-prefix=INT4Z
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-quantize{mode=w4a8 group-size=4}))" | FileCheck %s --check-prefix=W4A8

// A matmul with a constant weight becomes v4f.quantized_matmul: the weight
// per output column, symmetric (column 0: max 1 -> [127, 64]; column 1:
// max 4 -> [-64, 127], ties to even), its scales max/127, and the bias and
// activation moved over. The float weight is gone.
// CHECK-LABEL: func @weight_per_column
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[127, -64], [64, 127]]> : tensor<2x2xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[0.00787401571, 0.0314960629]> : tensor<2xf32>
// CHECK: %[[Q:.*]] = v4f.quantized_matmul %arg0, %[[W]], %[[S]] bias(%{{.*}}) {act_quant = "dynamic", activation = "relu"}
// CHECK-NOT: v4f.matmul
// CHECK-NOT: tensor<2x2xf32>
// CHECK: return %[[Q]]
// Per tensor (the default): one scale, max |W| / 127 = 4 / 127, for both
// columns (column 0: 1 -> 32, 0.5 -> 16).
// TENSOR-LABEL: func @weight_per_column
// TENSOR-DAG: arith.constant dense<{{\[}}[32, -64], [16, 127]]> : tensor<2x2xi8>
// TENSOR-DAG: arith.constant dense<0.0314960629> : tensor<2xf32>
// int4-weight, one group of 2 rows per column: the value of largest
// magnitude maps to -8 (column 0: 1 -> scale -1/8, 0.5 -> -4; column 1: 4 ->
// scale -1/2, -2 -> 4); scales [groups, N]; bias and activation kept.
// INT4-LABEL: func @weight_per_column
// INT4-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[-8, 4], [-4, -8]]> : tensor<2x2xi8>
// INT4-DAG: %[[S:.*]] = arith.constant dense<{{\[}}[-1.250000e-01, -5.000000e-01]]> : tensor<1x2xf32>
// INT4: v4f.int4_matmul %arg0, %[[W]], %[[S]] bias(%{{.*}}) {activation = "relu", group_size = 2 : i64}
// INT4-NOT: v4f.matmul
// w4a8: the same symmetric int4 groups (one group of 4 >= K rows here),
// marked for int8 activations.
// W4A8-LABEL: func @weight_per_column
// W4A8: v4f.int4_matmul %arg0, %{{.*}}, %{{.*}} bias(%{{.*}}) {activation = "relu", group_size = 4 : i64, int8_activations}
// Without calibration ranges the static mode keeps the matmul in float and says why.
// STATIC-LABEL: func @weight_per_column
// STATIC: v4f.matmul {{.*}}v4f.precision_note = "no calibration range"
func.func @weight_per_column(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[0.25, -0.25]> : tensor<2xf32>
  %y = v4f.matmul %x, %w bias(%b) {activation = "relu"} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// A calibrated range [-1, 3] gives the static parameters: scale 4 / 255 and
// zero point round(-128 + 1 / scale) = -64; batch dims of the lhs stay.
// STATIC-LABEL: func @calibrated
// STATIC: v4f.quantized_matmul %arg0, %{{.*}}, %{{.*}} {act_quant = "static", act_scale = 0.0156862754 : f32, act_zero_point = -64 : i32}
// STATIC-SAME: (tensor<2x3x4xf32>, tensor<4x5xi8>, tensor<5xf32>) -> tensor<2x3x5xf32>
// int4-weight needs no calibration; K = 4 makes two groups of 2.
// INT4-LABEL: func @calibrated
// INT4: v4f.int4_matmul {{.*}}(tensor<2x3x4xf32>, tensor<4x5xi8>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
func.func @calibrated(%x: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> {
  %w = arith.constant dense<0.5> : tensor<4x5xf32>
  %y = v4f.matmul %x, %w {v4f.calibration = array<f32: -1.0, 3.0>} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Kept in float, with the reason: an excluded node, a weight that is not
// a constant, a batched weight.
// CHECK-LABEL: func @kept_float
// CHECK: v4f.matmul {{.*}}v4f.precision_note = "excluded (--exclude)"
// CHECK: v4f.matmul {{.*}}v4f.precision_note = "weight is not a rank-2 float32 constant"
// CHECK: v4f.matmul {{.*}}v4f.precision_note = "weight is not a rank-2 float32 constant"
// CHECK-NOT: v4f.quantized_matmul
func.func @kept_float(%x: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x3x2xf32>) {
  %c = arith.constant dense<1.0> : tensor<2x2xf32>
  %a = v4f.matmul %x, %c : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32> loc("keep_me")
  %b = v4f.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c3 = arith.constant dense<1.0> : tensor<2x2x2xf32>
  %d = v4f.matmul %x, %c3 : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<2x3x2xf32>
  return %a, %b, %d : tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x3x2xf32>
}

// -----

// Static int8 convolutions: a calibrated conv (groups 1, static H and W)
// becomes v4f.quantized_conv; the OIHW weight is quantized per output
// channel or, by default, per tensor (max |W| = 4: 1 -> 32, -2 -> -64 (ties
// to even), 0.5 -> 16, 4 -> 127), the activation with its calibrated range
// [-1, 3] (scale 4/255, zero point round(-128 + 63.75) = -64); bias,
// residual and activation move over. A grouped conv and one whose width is
// known only at run time stay float32 and say why; the dynamic mode keeps
// every conv float32.
// STATIC-LABEL: func @convs
// STATIC-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}32, -64]]], {{\[\[\[}}16, 127]]]]> : tensor<2x1x1x2xi8>
// STATIC-DAG: %[[S:.*]] = arith.constant dense<0.0314960629> : tensor<2xf32>
// STATIC: v4f.quantized_conv %arg0, %[[W]], %[[S]] bias(%{{.*}}) residual(%arg2) {act_scale = 0.0156862754 : f32, act_zero_point = -64 : i32, activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 1>, strides = array<i64: 1, 1>}
// STATIC: v4f.conv {{.*}}v4f.precision_note = "grouped or depthwise convolution (memory-bound; kept float32)"
// STATIC: v4f.conv {{.*}}v4f.precision_note = "input channels, height or width are known only at run time"
// CHECK-LABEL: func @convs
// CHECK-COUNT-3: v4f.precision_note = "convolutions are quantized by static int8 only (--quantize=int8 with calibration data)"
// CHECK-NOT: v4f.quantized_conv
func.func @convs(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x3x3xf32>, %r: tensor<1x2x3x3xf32>, %d: tensor<1x1x3x?xf32>)
    -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x?xf32>) {
  %w = arith.constant dense<[[[[1.0, -2.0]]], [[[0.5, 4.0]]]]> : tensor<2x1x1x2xf32>
  %b = arith.constant dense<[0.25, -0.25]> : tensor<2xf32>
  %y = v4f.conv %x, %w bias(%b) residual(%r) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
         pads = array<i64: 0, 0, 0, 1>, groups = 1 : i64, activation = "relu", v4f.calibration = array<f32: -1.0, 3.0>}
       : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %gw = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %gy = v4f.conv %g, %gw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
          groups = 2 : i64, v4f.calibration = array<f32: -1.0, 3.0>}
        : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %dy = v4f.conv %d, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 1>,
          groups = 1 : i64, v4f.calibration = array<f32: -1.0, 3.0>}
        : (tensor<1x1x3x?xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x3x?xf32>
  return %y, %gy, %dy : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x?xf32>
}

// -----

// int4-weight with zero points: each group (2 rows here, one per column) is
// asymmetric over its range widened to contain 0. Column 0: [0, 1], scale
// 1/15 (rounded up in float32), zero point 0; 1 -> 15, 0.5 -> 7.49... -> 7. Column 1:
// [-2, 4], scale 0.4, zero point 5; -2 -> 0, 4 -> 15. Values and zero points
// are stored minus 8 (the signed int4 domain).
// INT4Z-LABEL: func @zero_points
// INT4Z-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[7, -8], [-1, 7]]> : tensor<2x2xi8>
// INT4Z-DAG: %[[S:.*]] = arith.constant dense<{{\[}}[0.0666666701, 4.000000e-01]]> : tensor<1x2xf32>
// INT4Z-DAG: %[[Z:.*]] = arith.constant dense<{{\[}}[-8, -3]]> : tensor<1x2xi8>
// INT4Z: v4f.int4_matmul %arg0, %[[W]], %[[S]] zero_point(%[[Z]]) {group_size = 2 : i64}
func.func @zero_points(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
  %y = v4f.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
