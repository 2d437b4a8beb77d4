// RUN: v4f-opt %s | FileCheck %s
// RUN: v4f-opt %s | v4f-opt | FileCheck %s

// The layout, normalization and signal composites round-trip.

// CHECK-LABEL: func @layout_and_norms
func.func @layout_and_norms(%x: tensor<1x8x3x3xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: v4f.depth_space %{{.*}} {blocksize = 2 : i64, mode = "CRD", to_space = true} : tensor<1x8x3x3xf32> -> tensor<1x2x6x6xf32>
  %0 = v4f.depth_space %x {blocksize = 2 : i64, to_space = true, mode = "CRD"} : tensor<1x8x3x3xf32> -> tensor<1x2x6x6xf32>
  // CHECK: v4f.moment_norm %{{.*}} scale(%{{.*}}) bias(%{{.*}}) {axes = array<i64: 2, 3>, epsilon = 9.99999974E-6 : f32}
  %1 = v4f.moment_norm %x scale(%s) bias(%b) {axes = array<i64: 2, 3>, epsilon = 1.0e-05 : f32}
       : (tensor<1x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
  // CHECK: v4f.moment_norm %{{.*}} {axes = array<i64: 0, 2, 3>, epsilon = 9.99999971E-10 : f32} : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %2 = v4f.moment_norm %1 {axes = array<i64: 0, 2, 3>, epsilon = 1.0e-09 : f32} : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  // CHECK: v4f.group_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32, num_groups = 4 : i64, per_group = false}
  %3 = v4f.group_norm %2, %s, %b {num_groups = 4 : i64, epsilon = 1.0e-05 : f32, per_group = false}
       : (tensor<1x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
  // CHECK: v4f.lp_norm %{{.*}} {axis = 1 : i64, p = 1 : i64} : tensor<1x8x3x3xf32>
  %4 = v4f.lp_norm %3 {axis = 1 : i64, p = 1 : i64} : tensor<1x8x3x3xf32>
  // CHECK: v4f.lrn %{{.*}} {alpha = 9.99999974E-5 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 3 : i64} : tensor<1x8x3x3xf32>
  %5 = v4f.lrn %4 {size = 3 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : tensor<1x8x3x3xf32>
  %6 = v4f.depth_space %5 {blocksize = 2 : i64, to_space = true} : tensor<1x8x3x3xf32> -> tensor<1x2x6x6xf32>
  return %6 : tensor<1x2x6x6xf32>
}

// CHECK-LABEL: func @signal
func.func @signal(%n: tensor<1xi64>, %x: tensor<2x8x1xf32>) -> (tensor<?xf32>, tensor<2x5x2xf32>) {
  // CHECK: v4f.window %{{.*}} {kind = "hann", periodic = true} : tensor<1xi64> -> tensor<?xf32>
  %w = v4f.window %n {kind = "hann", periodic = true} : tensor<1xi64> -> tensor<?xf32>
  // CHECK: v4f.dft %{{.*}} {axis = 1 : i64, inverse = false, length = 8 : i64, onesided = true} : tensor<2x8x1xf32> -> tensor<2x5x2xf32>
  %y = v4f.dft %x {axis = 1 : i64, length = 8 : i64, inverse = false, onesided = true} : tensor<2x8x1xf32> -> tensor<2x5x2xf32>
  // CHECK: v4f.stft %{{.*}} {frame_length = 8 : i64, frame_step = 4 : i64, onesided = true} : (tensor<2x8x1xf32>) -> tensor<2x1x5x2xf32>
  %s = v4f.stft %x {frame_step = 4 : i64, frame_length = 8 : i64, onesided = true} : (tensor<2x8x1xf32>) -> tensor<2x1x5x2xf32>
  return %w, %y : tensor<?xf32>, tensor<2x5x2xf32>
}

// CHECK-LABEL: func @rotary
func.func @rotary(%x: tensor<1x3x8xf32>, %cos: tensor<16x2xf32>, %sin: tensor<16x2xf32>, %p: tensor<1x3xi64>) -> tensor<1x3x8xf32> {
  // CHECK: v4f.rotary_embedding %{{.*}}, %{{.*}}, %{{.*}} positions(%{{.*}}) {interleaved = true, num_heads = 2 : i64, rotary_dim = 0 : i64}
  %y = v4f.rotary_embedding %x, %cos, %sin positions(%p) {rotary_dim = 0 : i64, num_heads = 2 : i64, interleaved = true}
       : (tensor<1x3x8xf32>, tensor<16x2xf32>, tensor<16x2xf32>, tensor<1x3xi64>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}
