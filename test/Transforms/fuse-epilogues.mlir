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

// -----

// GELU as exporters write it, x * (1 + erf(x / sqrt 2)) * 0.5 after a matmul
// with its bias, becomes the matmul's "gelu" epilogue; so does the grouping
// (x * 0.5) * (1 + erf(x * 1/sqrt 2)) with the 1 on the left, after a conv.
// CHECK-LABEL: func @matmul_gelu
// CHECK: %[[M:.*]] = v4f.matmul %{{.*}}, %{{.*}} bias(%{{.*}}) {activation = "gelu"}
// CHECK-NOT: v4f.erf
// CHECK-NOT: v4f.mul
// CHECK: return %[[M]]
func.func @matmul_gelu(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %m = v4f.matmul %a, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %x = v4f.add %m, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %d = v4f.div %x, %s2 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %e = v4f.erf %d : tensor<3x2xf32>
  %p1 = v4f.add %e, %one : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %p = v4f.mul %x, %p1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = v4f.mul %p, %half : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func @conv_gelu_regrouped
// CHECK: %[[C:.*]] = v4f.conv %{{.*}}, %{{.*}} {activation = "gelu"
// CHECK-NOT: v4f.erf
// CHECK: return %[[C]]
func.func @conv_gelu_regrouped(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %r2 = arith.constant dense<0.707106769> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %h = v4f.mul %c, %half : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %d = v4f.mul %r2, %c : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %e = v4f.erf %d : tensor<1x2x4x4xf32>
  %p1 = v4f.add %one, %e : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = v4f.mul %h, %p1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// GELU's tanh form (GPT-2's gelu_new): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x +
// 0.044715 * x * x * x))) after a matmul: its "gelu_tanh" epilogue.
// CHECK-LABEL: func @matmul_gelu_tanh
// CHECK: %[[M:.*]] = v4f.matmul %{{.*}}, %{{.*}} {activation = "gelu_tanh"}
// CHECK-NOT: v4f.tanh
// CHECK-NOT: v4f.mul
// CHECK: return %[[M]]
func.func @matmul_gelu_tanh(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %c1 = arith.constant dense<0.0447149985> : tensor<f32>
  %c2 = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %x = v4f.matmul %a, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %sq = v4f.mul %x, %x : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %cube = v4f.mul %sq, %x : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %t0 = v4f.mul %c1, %cube : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %in = v4f.add %x, %t0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %sc = v4f.mul %c2, %in : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %th = v4f.tanh %sc : tensor<3x2xf32>
  %p1 = v4f.add %one, %th : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %hx = v4f.mul %half, %x : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = v4f.mul %hx, %p1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Not GELU: the wrong constant under erf, and x also used elsewhere (the
// matmul must stay visible): the chains stay as they are.
// CHECK-LABEL: func @not_gelu
// CHECK-COUNT-2: v4f.erf
// CHECK-NOT: activation = "gelu"
func.func @not_gelu(%a: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %s3 = arith.constant dense<1.7320508> : tensor<f32>
  %s2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %m = v4f.matmul %a, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %d = v4f.div %m, %s3 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %e = v4f.erf %d : tensor<3x2xf32>
  %p1 = v4f.add %e, %one : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %p = v4f.mul %m, %p1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = v4f.mul %p, %half : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %m2 = v4f.matmul %a, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %d2 = v4f.div %m2, %s2 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %e2 = v4f.erf %d2 : tensor<3x2xf32>
  %q1 = v4f.add %e2, %one : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %q = v4f.mul %m2, %q1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %z = v4f.mul %q, %half : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  return %y, %z, %m2 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// SiLU as exporters write it (YOLOv5/v8, EfficientNet), x * sigmoid(x) in
// either operand order, becomes the producer's "silu" epilogue; not when
// the producer's result has another user.
// CHECK-LABEL: func @silu
// CHECK: %[[C:.*]] = v4f.conv %{{.*}}, %{{.*}} bias(%{{.*}}) {activation = "silu"
// CHECK: %[[M:.*]] = v4f.matmul %{{.*}}, %{{.*}} {activation = "silu"}
// CHECK: %[[K:.*]] = v4f.conv %{{.*}}, %{{.*}} {dilations
// CHECK: %[[S:.*]] = v4f.sigmoid %[[K]]
// CHECK: %[[P:.*]] = v4f.mul %[[K]], %[[S]]
// CHECK: return %[[C]], %[[M]], %[[P]], %[[K]]
func.func @silu(%x: tensor<1x2x4x4xf32>, %a: tensor<3x4xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<3x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[[[0.5]], [[-0.5]]]> : tensor<2x1x1xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = v4f.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = v4f.sigmoid %1 : tensor<1x2x4x4xf32>
  %3 = v4f.mul %1, %2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %wm = arith.constant dense<1.0> : tensor<4x2xf32>
  %m = v4f.matmul %a, %wm : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %4 = v4f.sigmoid %m : tensor<3x2xf32>
  %5 = v4f.mul %4, %m : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %k = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %6 = v4f.sigmoid %k : tensor<1x2x4x4xf32>
  %7 = v4f.mul %k, %6 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %3, %5, %7, %k : tensor<1x2x4x4xf32>, tensor<3x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
