// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions,v4f-fuse-pointwise-depthwise))" -split-input-file | FileCheck %s
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cuda},func.func(v4f-fuse-pointwise-depthwise))" -split-input-file | FileCheck %s --check-prefix=CUDA

// MobileNetV2's first expansion: 16 -> 96 channels at 112 x 112 (4.8 MB),
// read only by the stride-2 depthwise conv: the 1x1 conv joins the depthwise
// region, in front of it (one fused kernel on the CPU; the GPU keeps both).
// CHECK-LABEL: func.func @expansion
// CHECK: %[[R:.*]] = v4f.dispatch -> tensor<1x96x56x56xf32> attributes {v4f.fused_kernel = "pointwise_depthwise"} {
// CHECK-NEXT: %[[E:.*]] = v4f.conv %arg0, %{{.*}} bias(%{{.*}}) {{{.*}}activation = "clip"
// CHECK-NEXT: v4f.conv %[[E]], %{{.*}} bias(%{{.*}}) {{{.*}}activation = "clip"{{.*}}groups = 96
// CHECK-NEXT: v4f.dispatch_return
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
// CUDA-LABEL: func.func @expansion
// CUDA-COUNT-2: v4f.dispatch -> {{.*}} attributes {v4f.placement = "cuda"}
func.func @expansion(%x: tensor<1x16x112x112xf32>) -> tensor<1x96x56x56xf32> {
  %w1 = arith.constant dense<0.1> : tensor<96x16x1x1xf32>
  %b1 = arith.constant dense<0.1> : tensor<96xf32>
  %w2 = arith.constant dense<0.1> : tensor<96x1x3x3xf32>
  %b2 = arith.constant dense<0.1> : tensor<96xf32>
  %0 = v4f.conv %x, %w1 bias(%b1) {activation = "clip", act_alpha = 0.0 : f32, act_beta = 6.0 : f32, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>, tensor<96xf32>) -> tensor<1x96x112x112xf32>
  %1 = v4f.conv %0, %w2 bias(%b2) {activation = "clip", act_alpha = 0.0 : f32, act_beta = 6.0 : f32, dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>, tensor<96xf32>) -> tensor<1x96x56x56xf32>
  return %1 : tensor<1x96x56x56xf32>
}

// -----

// Left apart: an expansion under 1 MB (its round trip stays in L2), one read
// twice, a 1x1 conv with a residual, one with a stride, a depthwise conv of
// stride 3, and a grouped (not depthwise) conv: 13 ops, 13 regions.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-13: v4f.dispatch ->
// CHECK-NOT: v4f.dispatch ->
func.func @not_fused(%x: tensor<1x16x112x112xf32>, %s: tensor<1x16x28x28xf32>, %r: tensor<1x96x112x112xf32>)
    -> (tensor<1x96x28x28xf32>, tensor<1x96x112x112xf32>, tensor<1x96x112x112xf32>, tensor<1x96x112x112xf32>,
        tensor<1x96x112x112xf32>, tensor<1x96x38x38xf32>, tensor<1x96x112x112xf32>) {
  %w1 = arith.constant dense<0.1> : tensor<96x16x1x1xf32>
  %w2 = arith.constant dense<0.1> : tensor<96x1x3x3xf32>
  %wg = arith.constant dense<0.1> : tensor<96x2x3x3xf32>
  %a0 = v4f.conv %s, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x28x28xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x28x28xf32>
  %a1 = v4f.conv %a0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x96x28x28xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x28x28xf32>
  %b0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
  %b1 = v4f.conv %b0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x112x112xf32>
  %c0 = v4f.conv %x, %w1 residual(%r) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>, tensor<1x96x112x112xf32>) -> tensor<1x96x112x112xf32>
  %c1 = v4f.conv %c0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x112x112xf32>
  %x2 = v4f.concat %x, %x, %x, %x {axis = 2 : i64} : (tensor<1x16x112x112xf32>, tensor<1x16x112x112xf32>, tensor<1x16x112x112xf32>, tensor<1x16x112x112xf32>) -> tensor<1x16x448x112xf32>
  %d0 = v4f.conv %x2, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 1>}
       : (tensor<1x16x448x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x224x112xf32>
  %d1 = v4f.conv %d0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>}
       : (tensor<1x96x224x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x112x112xf32>
  %e0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
  %e1 = v4f.conv %e0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x38x38xf32>
  %f0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
  %f1 = v4f.conv %f0, %wg {dilations = array<i64: 1, 1>, groups = 48 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x96x112x112xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x112x112xf32>
  return %a1, %b0, %b1, %c1, %d1, %e1, %f1 : tensor<1x96x28x28xf32>, tensor<1x96x112x112xf32>, tensor<1x96x112x112xf32>,
         tensor<1x96x112x112xf32>, tensor<1x96x112x112xf32>, tensor<1x96x38x38xf32>, tensor<1x96x112x112xf32>
}

// -----

// Nor a depthwise stride wider than its window (a 1x1 depthwise conv of
// stride 2), nor a left padding over 4.
// CHECK-LABEL: func.func @not_fused_window
// CHECK-COUNT-4: v4f.dispatch ->
// CHECK-NOT: v4f.dispatch ->
func.func @not_fused_window(%x: tensor<1x16x112x112xf32>) -> (tensor<1x96x56x56xf32>, tensor<1x96x118x120xf32>) {
  %w1 = arith.constant dense<0.1> : tensor<96x16x1x1xf32>
  %w2 = arith.constant dense<0.1> : tensor<96x1x1x1xf32>
  %w3 = arith.constant dense<0.1> : tensor<96x1x3x3xf32>
  %a0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
  %a1 = v4f.conv %a0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x1x1xf32>) -> tensor<1x96x56x56xf32>
  %b0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
  %b1 = v4f.conv %b0, %w3 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 4, 5, 4, 5>, strides = array<i64: 1, 1>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x118x120xf32>
  return %a1, %b1 : tensor<1x96x56x56xf32>, tensor<1x96x118x120xf32>
}
