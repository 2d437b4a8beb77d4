// RUN: v4f-opt %s -split-input-file -v4f-fuse-epilogues | FileCheck %s

// CHECK-LABEL: func @conv_bias_residual_relu
// CHECK: %[[C:.*]] = v4f.conv %{{.*}}, %{{.*}} bias(%{{.*}}) residual(%arg1) {activation = "relu"
// CHECK-NOT: v4f.add
// CHECK-NOT: v4f.relu
// CHECK: return %[[C]]
func.func @conv_bias_residual_relu(%x: tensor<1x2x4x4xf32>, %r: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[[[0.5]], [[-0.5]]]> : tensor<2x1x1xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = v4f.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = v4f.add %r, %1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = v4f.relu %2 : tensor<1x2x4x4xf32>
  return %3 : tensor<1x2x4x4xf32>
}

// -----

// CHECK-LABEL: func @matmul_bias_clip
// CHECK: v4f.matmul %{{.*}}, %{{.*}} bias(%{{.*}}) {act_beta = 6.000000e+00 : f32, activation = "clip"}
func.func @matmul_bias_clip(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %b = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %m = v4f.matmul %a, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %1 = v4f.add %m, %b : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %2 = v4f.clip %1 {min = 0.0 : f32, max = 6.0 : f32} : tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// An activation after a residual can't move before it, and an add after an
// activation is not fused.
// CHECK-LABEL: func @no_fusion_after_activation
// CHECK: v4f.conv {{.*}}activation = "relu"
// CHECK: v4f.add
func.func @no_fusion_after_activation(%x: tensor<1x2x4x4xf32>, %r: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = v4f.relu %c : tensor<1x2x4x4xf32>
  %2 = v4f.add %1, %r : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// A bias that varies along H is not a per-channel bias.
// CHECK-LABEL: func @not_per_channel
// CHECK: v4f.conv
// CHECK-NOT: bias(
// CHECK: v4f.add
func.func @not_per_channel(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = v4f.add %c, %b : (tensor<1x2x4x4xf32>, tensor<4x1xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// MobileNetV3's conv + bias + HardSwish, and HardSigmoid with its alpha/beta
// after a matmul, become the ops' epilogues.
// CHECK-LABEL: func @conv_hard_swish
// CHECK: %[[C:.*]] = v4f.conv %{{.*}}, %{{.*}} bias(%{{.*}}) {activation = "hard_swish"
// CHECK-NOT: v4f.hard_swish
// CHECK: return %[[C]]
func.func @conv_hard_swish(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[[[0.5]], [[-0.5]]]> : tensor<2x1x1xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = v4f.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = v4f.hard_swish %1 : tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// CHECK-LABEL: func @matmul_hard_sigmoid
// CHECK: v4f.matmul %{{.*}}, %{{.*}} {act_alpha = 2.000000e-01 : f32, act_beta = 5.000000e-01 : f32, activation = "hard_sigmoid"}
// CHECK-NOT: v4f.hard_sigmoid
func.func @matmul_hard_sigmoid(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %m = v4f.matmul %a, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %1 = v4f.hard_sigmoid %m {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
