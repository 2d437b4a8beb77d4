// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions,v4f-fuse-channel-scale))" -split-input-file | FileCheck %s
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cuda},func.func(v4f-fuse-channel-scale))" -split-input-file | FileCheck %s --check-prefix=CUDA
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions,v4f-fuse-channel-scale),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-pack-weights,v4f-build-plan)" -split-input-file | FileCheck %s --check-prefix=GEN

// A squeeze-and-excite block's end (MobileNetV3): the per-image channel
// scale s [N, C, 1, 1] times x, read only by the 1x1 projection conv: the
// multiplication joins the conv's region, in front of it (on the CPU the
// conv of x with its packed weight scaled per image; the GPU keeps both).
// The scale may be either operand, and a [1, C, 1, 1] scale broadcasts.
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]] = v4f.dispatch -> tensor<2x24x14x14xf32> attributes {v4f.fused_kernel = "channel_scaled_conv"} {
// CHECK-NEXT: %[[M:.*]] = v4f.mul %{{.*}}, %arg0
// CHECK-NEXT: v4f.conv %[[M]], %{{.*}} bias(%{{.*}})
// CHECK-NEXT: v4f.dispatch_return
// CHECK: v4f.dispatch -> tensor<2x24x14x14xf32> attributes {v4f.fused_kernel = "channel_scaled_conv"} {
// CHECK-NEXT: %[[M2:.*]] = v4f.mul %arg0, %arg2
// CHECK-NEXT: v4f.conv %[[M2]]
// CHECK-NEXT: v4f.dispatch_return
// CUDA-LABEL: func.func @main
// CUDA-COUNT-5: v4f.dispatch -> {{.*}} attributes {v4f.placement = "cuda"}
// The prologue scales the packed weight per image (AVX-512: 24 output
// channels in a_panels of 8, K = 96): rows of a panel times the scale of
// their channel; then the GEMM reads image n's scaled weight.
// GEN-LABEL: func.func @v4f_kernel_{{[0-9]+}}(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv weight scale"]
// GEN: arith.mulf {{.*}} : vector<8xf32>
func.func @main(%x: tensor<2x96x14x14xf32>, %p: tensor<2x96x1x1xf32>, %q: tensor<1x96x1x1xf32>)
    -> (tensor<2x24x14x14xf32>, tensor<2x24x14x14xf32>) {
  %w1 = arith.constant dense<0.1> : tensor<96x96x1x1xf32>
  %b1 = arith.constant dense<0.1> : tensor<96xf32>
  %w2 = arith.constant dense<0.1> : tensor<24x96x1x1xf32>
  %b2 = arith.constant dense<0.1> : tensor<24xf32>
  %s = v4f.conv %p, %w1 bias(%b1) {activation = "hard_sigmoid", act_alpha = 0.1666 : f32, act_beta = 0.5 : f32, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<2x96x1x1xf32>, tensor<96x96x1x1xf32>, tensor<96xf32>) -> tensor<2x96x1x1xf32>
  %m = v4f.mul %s, %x : (tensor<2x96x1x1xf32>, tensor<2x96x14x14xf32>) -> tensor<2x96x14x14xf32>
  %y = v4f.conv %m, %w2 bias(%b2) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<2x96x14x14xf32>, tensor<24x96x1x1xf32>, tensor<24xf32>) -> tensor<2x24x14x14xf32>
  %m2 = v4f.mul %x, %q : (tensor<2x96x14x14xf32>, tensor<1x96x1x1xf32>) -> tensor<2x96x14x14xf32>
  %y2 = v4f.conv %m2, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<2x96x14x14xf32>, tensor<24x96x1x1xf32>) -> tensor<2x24x14x14xf32>
  return %y, %y2 : tensor<2x24x14x14xf32>, tensor<2x24x14x14xf32>
}

// -----

// Left apart: a product read twice, a 3x3 conv, a grouped conv, a scale
// that varies over the plane's rows, a weight computed at run time, and a
// multiplication of two full tensors: 12 ops, 12 regions.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-12: v4f.dispatch ->
// CHECK-NOT: v4f.dispatch ->
func.func @main(%x: tensor<1x32x8x8xf32>, %s: tensor<1x32x1x1xf32>, %r: tensor<1x32x8x1xf32>,
                     %wr: tensor<16x32x1x1xf32>)
    -> (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>, tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>,
        tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %w = arith.constant dense<0.1> : tensor<16x32x1x1xf32>
  %w3 = arith.constant dense<0.1> : tensor<16x32x3x3xf32>
  %wg = arith.constant dense<0.1> : tensor<32x1x1x1xf32>
  %a0 = v4f.mul %s, %x : (tensor<1x32x1x1xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %a1 = v4f.conv %a0, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  %b0 = v4f.mul %s, %x : (tensor<1x32x1x1xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %b1 = v4f.conv %b0, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
       : (tensor<1x32x8x8xf32>, tensor<16x32x3x3xf32>) -> tensor<1x16x8x8xf32>
  %c0 = v4f.mul %x, %s : (tensor<1x32x8x8xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %c1 = v4f.conv %c0, %wg {dilations = array<i64: 1, 1>, groups = 32 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x8x8xf32>, tensor<32x1x1x1xf32>) -> tensor<1x32x8x8xf32>
  %d0 = v4f.mul %x, %r : (tensor<1x32x8x8xf32>, tensor<1x32x8x1xf32>) -> tensor<1x32x8x8xf32>
  %d1 = v4f.conv %d0, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  %e0 = v4f.mul %s, %x : (tensor<1x32x1x1xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %e1 = v4f.conv %e0, %wr {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  %f0 = v4f.mul %x, %x : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %f1 = v4f.conv %f0, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
       : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  return %a1, %a0, %b1, %c1, %d1, %e1, %f1 : tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>, tensor<1x16x8x8xf32>,
      tensor<1x32x8x8xf32>, tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}
