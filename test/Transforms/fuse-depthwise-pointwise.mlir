// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions,v4f-fuse-pointwise-depthwise,v4f-fuse-depthwise-pointwise))" -split-input-file | FileCheck %s
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cuda},func.func(v4f-fuse-pointwise-depthwise,v4f-fuse-depthwise-pointwise))" -split-input-file | FileCheck %s --check-prefix=CUDA

// MobileNetV2's first block: a depthwise conv of 32 channels at 112 x 112
// (1.6 MB) read only by the 1x1 projection to 16 channels: the depthwise
// conv joins the projection's region, in front of it (one fused kernel on
// the CPU; the GPU keeps both). A residual of the 1x1 conv stays its operand.
// CHECK-LABEL: func.func @first_block
// CHECK: %[[R:.*]] = v4f.dispatch -> tensor<1x16x112x112xf32> attributes {v4f.fused_kernel = "depthwise_pointwise"} {
// CHECK-NEXT: %[[D:.*]] = v4f.conv %arg0, %{{.*}} bias(%{{.*}}) {{{.*}}activation = "clip"{{.*}}groups = 32
// CHECK-NEXT: v4f.conv %[[D]], %{{.*}} bias(%{{.*}}) residual(%arg1)
// CHECK-NEXT: v4f.dispatch_return
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
// CUDA-LABEL: func.func @first_block
// CUDA-COUNT-2: v4f.dispatch -> {{.*}} attributes {v4f.placement = "cuda"}
func.func @first_block(%x: tensor<1x32x112x112xf32>, %r: tensor<1x16x112x112xf32>) -> tensor<1x16x112x112xf32> {
  %w1 = arith.constant dense<0.1> : tensor<32x1x3x3xf32>
  %b1 = arith.constant dense<0.1> : tensor<32xf32>
  %w2 = arith.constant dense<0.1> : tensor<16x32x1x1xf32>
  %b2 = arith.constant dense<0.1> : tensor<16xf32>
  %0 = v4f.conv %x, %w1 bias(%b1) {activation = "clip", act_alpha = 0.0 : f32, act_beta = 6.0 : f32, dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
  %1 = v4f.conv %0, %w2 bias(%b2) residual(%r) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>, tensor<1x16x112x112xf32>) -> tensor<1x16x112x112xf32>
  return %1 : tensor<1x16x112x112xf32>
}

// -----

// An expansion, depthwise conv and projection (MobileNetV2's second block):
// the expansion takes the depthwise conv into its region first, and that
// two-op region keeps the projection out.
// CHECK-LABEL: func.func @expanded_block
// CHECK: v4f.dispatch -> tensor<1x96x56x56xf32> attributes {v4f.fused_kernel = "pointwise_depthwise"} {
// CHECK-NEXT: v4f.conv
// CHECK-NEXT: v4f.conv {{.*}}groups = 96
// CHECK-NEXT: v4f.dispatch_return
// CHECK: v4f.dispatch -> tensor<1x24x56x56xf32> {
// CHECK-NEXT: v4f.conv
// CHECK-NEXT: v4f.dispatch_return
func.func @expanded_block(%x: tensor<1x16x112x112xf32>) -> tensor<1x24x56x56xf32> {
  %w1 = arith.constant dense<0.1> : tensor<96x16x1x1xf32>
  %w2 = arith.constant dense<0.1> : tensor<96x1x3x3xf32>
  %w3 = arith.constant dense<0.1> : tensor<24x96x1x1xf32>
  %0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x16x112x112xf32>, tensor<96x16x1x1xf32>) -> tensor<1x96x112x112xf32>
  %1 = v4f.conv %0, %w2 {dilations = array<i64: 1, 1>, groups = 96 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
       : (tensor<1x96x112x112xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x56x56xf32>
  %2 = v4f.conv %1, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x96x56x56xf32>, tensor<24x96x1x1xf32>) -> tensor<1x24x56x56xf32>
  return %2 : tensor<1x24x56x56xf32>
}

// -----

// Left apart: a depthwise result under 1 MB (its round trip stays in L2),
// one read twice, one with a residual, a 1x1 conv with a stride, a weight
// that is not a constant, and 4096 channels whose depthwise row alone (4096
// x 32 floats) fills the fused kernel's 512 KiB of scratch: 12 ops, 12
// regions.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-12: v4f.dispatch ->
// CHECK-NOT: v4f.dispatch ->
func.func @not_fused(%x: tensor<1x32x112x112xf32>, %s: tensor<1x32x56x56xf32>, %r: tensor<1x32x112x112xf32>,
                     %wx: tensor<16x32x1x1xf32>, %big: tensor<1x4096x32x32xf32>)
    -> (tensor<1x16x56x56xf32>, tensor<1x32x112x112xf32>, tensor<1x16x112x112xf32>, tensor<1x16x112x112xf32>,
        tensor<1x16x56x56xf32>, tensor<1x16x112x112xf32>, tensor<1x16x32x32xf32>) {
  %w1 = arith.constant dense<0.1> : tensor<32x1x3x3xf32>
  %w2 = arith.constant dense<0.1> : tensor<16x32x1x1xf32>
  %wb = arith.constant dense<0.1> : tensor<4096x1x3x3xf32>
  %wp = arith.constant dense<0.1> : tensor<16x4096x1x1xf32>
  %a0 = v4f.conv %s, %w1 {dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x56x56xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x56x56xf32>
  %a1 = v4f.conv %a0, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x56x56xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x56x56xf32>
  %b0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32>
  %b1 = v4f.conv %b0, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x112x112xf32>
  %c0 = v4f.conv %x, %w1 residual(%r) {dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, tensor<1x32x112x112xf32>) -> tensor<1x32x112x112xf32>
  %c1 = v4f.conv %c0, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x112x112xf32>
  %d0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32>
  %d1 = v4f.conv %d0, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
       : (tensor<1x32x112x112xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x56x56xf32>
  %f0 = v4f.conv %x, %w1 {dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32>
  %f1 = v4f.conv %f0, %wx {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x112x112xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x112x112xf32>
  %g0 = v4f.conv %big, %wb {dilations = array<i64: 1, 1>, groups = 4096 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x4096x32x32xf32>, tensor<4096x1x3x3xf32>) -> tensor<1x4096x32x32xf32>
  %g1 = v4f.conv %g0, %wp {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x4096x32x32xf32>, tensor<16x4096x1x1xf32>) -> tensor<1x16x32x32xf32>
  return %a1, %b0, %b1, %c1, %d1, %f1, %g1 : tensor<1x16x56x56xf32>, tensor<1x32x112x112xf32>, tensor<1x16x112x112xf32>,
         tensor<1x16x112x112xf32>, tensor<1x16x56x56xf32>, tensor<1x16x112x112xf32>, tensor<1x16x32x32xf32>
}
