// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions))" -split-input-file | FileCheck %s

// Each op that computes becomes a region; constants, views and the return
// stay outside. The conv keeps its fused epilogue (v4f-fuse-epilogues) as
// one root.
// CHECK-LABEL: func.func @roots
// CHECK: %[[W:.*]] = arith.constant
// CHECK: %[[C:.*]] = v4f.dispatch -> tensor<1x4x6x6xf32> {
// CHECK-NEXT: %[[CONV:.*]] = v4f.conv %arg0, %[[W]] {activation = "relu"
// CHECK-NEXT: v4f.dispatch_return %[[CONV]] : tensor<1x4x6x6xf32>
// CHECK-NEXT: }
// CHECK: %[[R:.*]] = v4f.reshape %[[C]]
// CHECK: %[[M:.*]] = v4f.dispatch -> tensor<1x4xf32> {
// CHECK-NEXT: v4f.reduce_mean
// CHECK: return %[[R]], %[[M]]
func.func @roots(%x: tensor<1x3x8x8xf32>) -> (tensor<1x144xf32>, tensor<1x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<4x3x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>,
         activation = "relu"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = v4f.reshape %0 {dim_sources = array<i64: 0, -1>} : (tensor<1x4x6x6xf32>) -> tensor<1x144xf32>
  %2 = v4f.reduce_mean %0 {axes = array<i64: 2, 3>, keepdims = false} : (tensor<1x4x6x6xf32>) -> tensor<1x4xf32>
  return %1, %2 : tensor<1x144xf32>, tensor<1x4xf32>
}

// -----

// An elementwise chain (mul -> add -> sigmoid) with single-use links joins
// one region: one kernel, no intermediate buffers.
// CHECK-LABEL: func.func @chain
// CHECK: %[[D:.*]] = v4f.dispatch -> tensor<2x8xf32> {
// CHECK-NEXT: %[[A:.*]] = v4f.mul %arg0, %arg1
// CHECK-NEXT: %[[B:.*]] = v4f.add %[[A]], %arg1
// CHECK-NEXT: %[[S:.*]] = v4f.sigmoid %[[B]]
// CHECK-NEXT: v4f.dispatch_return %[[S]] : tensor<2x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[D]]
func.func @chain(%a: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = v4f.mul %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = v4f.add %0, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %2 = v4f.sigmoid %1 : tensor<2x8xf32>
  return %2 : tensor<2x8xf32>
}

// -----

// No fusion across a value with two users, or into a non-elementwise root.
// CHECK-LABEL: func.func @boundaries
// CHECK: %[[T:.*]] = v4f.dispatch -> tensor<2x8xf32> {
// CHECK-NEXT: v4f.tanh
// CHECK-NEXT: v4f.dispatch_return
// CHECK: v4f.dispatch -> tensor<2x8xf32> {
// CHECK-NEXT: v4f.add %[[T]], %[[T]]
// CHECK-NEXT: v4f.dispatch_return
// CHECK: %[[SM:.*]] = v4f.dispatch -> tensor<2x8xf32> {
// CHECK-NEXT: v4f.softmax
// CHECK-NEXT: v4f.dispatch_return
// CHECK: v4f.dispatch -> tensor<2x8xf32> {
// CHECK-NEXT: v4f.relu %[[SM]]
func.func @boundaries(%a: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = v4f.tanh %a : tensor<2x8xf32>
  %1 = v4f.add %0, %0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = v4f.softmax %1 {axis = 1 : i64} : tensor<2x8xf32>
  %3 = v4f.relu %2 : tensor<2x8xf32>
  return %1, %3 : tensor<2x8xf32>, tensor<2x8xf32>
}
