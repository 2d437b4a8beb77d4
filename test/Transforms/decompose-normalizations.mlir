// RUN: v4f-opt %s -split-input-file -v4f-decompose-normalizations | FileCheck %s

// InstanceNormalization: mean and variance over the spatial dims, then one
// body for the normalization with the per-channel scale and bias as [C, 1, 1].
// CHECK-LABEL: func @instance
// CHECK: %[[MU:.*]] = v4f.reduce %arg0 {axes = array<i64: 2, 3>, keepdims = true, kind = "mean"} {{.*}} -> tensor<1x3x1x1xf32>
// CHECK: %[[DEV:.*]] = v4f.elementwise %arg0, %[[MU]]
// CHECK: arith.subf
// CHECK: %[[SQ:.*]] = v4f.elementwise %[[DEV]]
// CHECK: arith.mulf
// CHECK: %[[VAR:.*]] = v4f.reduce %[[SQ]] {axes = array<i64: 2, 3>, keepdims = true, kind = "mean"}
// CHECK: %[[S:.*]] = v4f.reshape %arg1 {{.*}} -> tensor<3x1x1xf32>
// CHECK: %[[B:.*]] = v4f.reshape %arg2 {{.*}} -> tensor<3x1x1xf32>
// CHECK: %[[Y:.*]] = v4f.elementwise %[[DEV]], %[[VAR]], %[[S]], %[[B]]
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: v4f.moment_norm
// CHECK: return %[[Y]]
func.func @instance(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = v4f.moment_norm %x scale(%s) bias(%b) {axes = array<i64: 2, 3>, epsilon = 1.0e-05 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// MeanVarianceNormalization: no scale or bias.
// CHECK-LABEL: func @mvn
// CHECK: %[[MU:.*]] = v4f.reduce %arg0 {axes = array<i64: 0, 2>, keepdims = true, kind = "mean"}
// CHECK: %[[DEV:.*]] = v4f.elementwise %arg0, %[[MU]]
// CHECK: %[[VAR:.*]] = v4f.reduce
// CHECK: %[[Y:.*]] = v4f.elementwise %[[DEV]], %[[VAR]] : (tensor<2x3x4xf32>, tensor<1x3x1xf32>) -> tensor<2x3x4xf32>
// CHECK: arith.constant 9.99999971E-10 : f32
// CHECK-NOT: arith.mulf
// CHECK: return %[[Y]]
func.func @mvn(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = v4f.moment_norm %x {axes = array<i64: 0, 2>, epsilon = 1.0e-09 : f32} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// GroupNormalization with per-group parameters (opset 18): statistics over
// [N, groups, C / groups * spatial], the parameters as [groups, 1] inside
// the normalization, then back to the input's shape.
// CHECK-LABEL: func @group_per_group
// CHECK: %[[G:.*]] = v4f.reshape %arg0 {{.*}} -> tensor<1x2x18xf32>
// CHECK: v4f.reduce %[[G]] {axes = array<i64: 2>, keepdims = true, kind = "mean"}
// CHECK: v4f.reshape %arg1 {{.*}} -> tensor<2x1xf32>
// CHECK: %[[N:.*]] = v4f.elementwise {{.*}} -> tensor<1x2x18xf32>
// CHECK: %[[Y:.*]] = v4f.reshape %[[N]] {{.*}} -> tensor<1x4x3x3xf32>
// CHECK-NOT: v4f.group_norm
// CHECK: return %[[Y]]
func.func @group_per_group(%x: tensor<1x4x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<1x4x3x3xf32> {
  %0 = v4f.group_norm %x, %s, %b {num_groups = 2 : i64, epsilon = 1.0e-05 : f32, per_group = true} : (tensor<1x4x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// Per-channel parameters (opset 21) apply after the normalization.
// CHECK-LABEL: func @group_per_channel
// CHECK: %[[N:.*]] = v4f.reshape %{{.*}} -> tensor<1x4x3x3xf32>
// CHECK: v4f.reshape %arg1 {{.*}} -> tensor<4x1x1xf32>
// CHECK: v4f.reshape %arg2 {{.*}} -> tensor<4x1x1xf32>
// CHECK: %[[Y:.*]] = v4f.elementwise %[[N]]
// CHECK: return %[[Y]]
func.func @group_per_channel(%x: tensor<1x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %0 = v4f.group_norm %x, %s, %b {num_groups = 2 : i64, epsilon = 1.0e-05 : f32, per_group = false} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// LpNormalization: an l2 reduction and a division that leaves zero norms.
// CHECK-LABEL: func @lp
// CHECK: %[[N:.*]] = v4f.reduce %arg0 {axes = array<i64: 1>, keepdims = true, kind = "l2"} {{.*}} -> tensor<2x1xf32>
// CHECK: %[[Y:.*]] = v4f.elementwise %arg0, %[[N]]
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.divf
// CHECK-NOT: v4f.lp_norm
// CHECK: return %[[Y]]
func.func @lp(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = v4f.lp_norm %x {axis = 1 : i64, p = 2 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// LRN: squares averaged over a window of 3 channels (padding counted) on a
// [N, 1, C, rest] view, then x / (bias + alpha * avg)^beta.
// CHECK-LABEL: func @lrn
// CHECK: %[[SQ:.*]] = v4f.elementwise %arg0
// CHECK: %[[V:.*]] = v4f.reshape %[[SQ]] {{.*}} -> tensor<1x1x5x16xf32>
// CHECK: %[[AVG:.*]] = v4f.avg_pool %[[V]] {count_include_pad = true, {{.*}}kernel_shape = array<i64: 3, 1>, pads = array<i64: 1, 0, 1, 0>
// CHECK: %[[SUM:.*]] = v4f.reshape %[[AVG]] {{.*}} -> tensor<1x5x4x4xf32>
// CHECK: %[[Y:.*]] = v4f.elementwise %arg0, %[[SUM]]
// CHECK: math.powf
// CHECK-NOT: v4f.lrn
// CHECK: return %[[Y]]
func.func @lrn(%x: tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32> {
  %0 = v4f.lrn %x {size = 3 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : tensor<1x5x4x4xf32>
  return %0 : tensor<1x5x4x4xf32>
}
