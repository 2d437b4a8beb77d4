// RUN: v4f-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(v4f-carry-int8))' | FileCheck %s

// A conv whose only users are int8 convs of one act scale / zero point
// stores int8 requantized to them; the consumers read it as int8. Through a
// max pool too (which then pools int8). The last conv, returned, stays float.
// CHECK-LABEL: func @chain
// CHECK: %[[A:.*]] = v4f.quantized_conv %arg0, {{.*}}act_scale = 5.000000e-01 : f32{{.*}}out_scale = 2.500000e-01 : f32, out_zero_point = -128 : i32{{.*}} -> tensor<1x4x8x8xi8>
// CHECK: %[[P:.*]] = v4f.max_pool %[[A]] {{.*}}: (tensor<1x4x8x8xi8>) -> tensor<1x4x4x4xi8>
// CHECK: %[[B:.*]] = v4f.quantized_conv %[[P]], {{.*}}act_scale = 2.500000e-01 : f32, act_zero_point = -128 : i32{{.*}}out_scale = 1.250000e-01 : f32, out_zero_point = 3 : i32{{.*}} -> tensor<1x4x4x4xi8>
// CHECK: %[[C:.*]] = v4f.quantized_conv %[[P]], {{.*}}(tensor<1x4x4x4xi8>, {{.*}}) -> tensor<1x4x4x4xi8>
// CHECK: %[[D:.*]] = v4f.quantized_conv %[[B]], {{.*}} -> tensor<1x4x4x4xf32>
// CHECK: %[[E:.*]] = v4f.quantized_conv %[[C]], {{.*}} -> tensor<1x4x4x4xf32>
// CHECK: return %[[D]], %[[E]]
func.func @chain(%x: tensor<1x3x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %w0 = arith.constant dense<1> : tensor<4x3x1x1xi8>
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  %a = v4f.quantized_conv %x, %w0, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32, activation = "relu"} : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xi8>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %p = v4f.max_pool %a {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %b = v4f.quantized_conv %p, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32, act_zero_point = -128 : i32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %c = v4f.quantized_conv %p, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32, act_zero_point = -128 : i32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %d = v4f.quantized_conv %b, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.125 : f32, act_zero_point = 3 : i32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %e = v4f.quantized_conv %c, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %d, %e : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// Left float: users quantizing with different scales, a float user, use as
// a residual, and a max pool with a float user.
// CHECK-LABEL: func @kept_float
// CHECK-NOT: out_scale
// CHECK-NOT: {{(x4|x2)xi8>}}
// CHECK: return
func.func @kept_float(%x: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x2x2xf32>) {
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  %a = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %b = v4f.quantized_conv %a, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %c = v4f.quantized_conv %a, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %d = v4f.quantized_conv %b, %w, %s residual(%c) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %e = v4f.relu %d : tensor<1x4x4x4xf32>
  %p = v4f.max_pool %e {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  return %b, %c, %d, %e, %p : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x2x2xf32>
}


// -----

// A result that feeds a conv's input and another conv's residual (ResNet's
// block output) is carried in int8 as both: the residual user gets the
// input user's scale and zero point. A result reaching convs only as a
// residual stays float (no input user to fix its scale).
// CHECK-LABEL: func @residual
// CHECK: %[[A:.*]] = v4f.quantized_conv %arg0, {{.*}}out_scale = 2.500000e-01 : f32, out_zero_point = 5 : i32{{.*}} -> tensor<1x4x4x4xi8>
// CHECK: %[[B:.*]] = v4f.quantized_conv %[[A]], {{.*}}out_scale = 5.000000e-01 : f32{{.*}} -> tensor<1x4x4x4xi8>
// CHECK: v4f.quantized_conv %[[B]], %{{.*}}, %{{.*}} residual(%[[A]]) {{.*}}residual_scale = 2.500000e-01 : f32, residual_zero_point = 5 : i32{{.*}} : (tensor<1x4x4x4xi8>, tensor<4x4x1x1xi8>, tensor<4xf32>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xf32>
// CHECK: %[[E:.*]] = v4f.quantized_conv %arg0, {{.*}} -> tensor<1x4x4x4xf32>
// CHECK: v4f.quantized_conv %arg0, {{.*}}residual(%[[E]]) {{.*}}(tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
func.func @residual(%x: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  %a = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %b = v4f.quantized_conv %a, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32, act_zero_point = 5 : i32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %c = v4f.quantized_conv %b, %w, %s residual(%a) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %e = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %d = v4f.quantized_conv %x, %w, %s residual(%e) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c, %d : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// A concat of quantized convs used only by it, read by int8 convs of one
// scale: the producers requantize to that scale and the concat moves int8.
// One whose input has another user (here returned) stays float.
// CHECK-LABEL: func @concat
// CHECK: %[[A:.*]] = v4f.quantized_conv %arg0, {{.*}}out_scale = 2.500000e-01 : f32, out_zero_point = -3 : i32{{.*}} -> tensor<1x4x4x4xi8>
// CHECK: %[[B:.*]] = v4f.quantized_conv %arg0, {{.*}}out_scale = 2.500000e-01 : f32, out_zero_point = -3 : i32{{.*}} -> tensor<1x4x4x4xi8>
// CHECK: %[[C:.*]] = v4f.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x8x4x4xi8>
// CHECK: v4f.quantized_conv %[[C]], {{.*}}(tensor<1x8x4x4xi8>, {{.*}}) -> tensor<1x4x4x4xf32>
// CHECK: v4f.concat {{.*}} -> tensor<1x8x4x4xf32>
func.func @concat(%x: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %w8 = arith.constant dense<1> : tensor<4x8x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  %a = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %b = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %c = v4f.concat %a, %b {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %d = v4f.quantized_conv %c, %w8, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32, act_zero_point = -3 : i32} : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %e = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %f = v4f.concat %e, %e {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %g = v4f.quantized_conv %f, %w8, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32} : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %d, %g, %e : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// Through a transpose (and on into a pool): the data movement ops move int8.
// CHECK-LABEL: func @movement
// CHECK: %[[A:.*]] = v4f.quantized_conv %arg0, {{.*}}out_scale = 2.500000e-01 : f32{{.*}} -> tensor<1x4x4x6xi8>
// CHECK: %[[T:.*]] = v4f.transpose %[[A]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x4x6xi8>) -> tensor<1x4x6x4xi8>
// CHECK: %[[P:.*]] = v4f.max_pool %[[T]] {{.*}}: (tensor<1x4x6x4xi8>) -> tensor<1x4x3x2xi8>
// CHECK: v4f.quantized_conv %[[P]], {{.*}}(tensor<1x4x3x2xi8>, {{.*}}) -> tensor<1x4x3x2xf32>
func.func @movement(%x: tensor<1x4x4x6xf32>) -> tensor<1x4x3x2xf32> {
  %w = arith.constant dense<1> : tensor<4x4x1x1xi8>
  %s = arith.constant dense<0.01> : tensor<4xf32>
  %a = v4f.quantized_conv %x, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.5 : f32} : (tensor<1x4x4x6xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x4x6xf32>
  %t = v4f.transpose %a {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x4x6xf32>) -> tensor<1x4x6x4xf32>
  %p = v4f.max_pool %t {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x6x4xf32>) -> tensor<1x4x3x2xf32>
  %b = v4f.quantized_conv %p, %w, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, act_scale = 0.25 : f32} : (tensor<1x4x3x2xf32>, tensor<4x4x1x1xi8>, tensor<4xf32>) -> tensor<1x4x3x2xf32>
  return %b : tensor<1x4x3x2xf32>
}
