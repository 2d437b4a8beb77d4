// RUN: v4f-opt %s -split-input-file -v4f-fold-batch-norm | FileCheck %s

// Folded into the conv: weight scaled per output channel by scale/sqrt(var+eps)
// = [2, 0.5], bias = beta - mean * that = [1 - 2*2, 0 - 4*0.5] = [-3, -2].
// CHECK-LABEL: func @into_conv
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[{{\[}}[2.000000e+00]]], [{{\[}}[5.000000e-01]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[-3.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK: %[[C:.*]] = v4f.conv %{{.*}}, %[[W]] bias(%[[B]])
// CHECK-NOT: v4f.batch_norm
// CHECK: return %[[C]]
func.func @into_conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %scale = arith.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = arith.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %var = arith.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = v4f.batch_norm %c, %scale, %beta, %mean, %var {epsilon = 0.0 : f32}
       : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A batch norm whose input is not a foldable conv becomes mul + add with
// [C, 1, 1] constants.
// CHECK-LABEL: func @standalone
// CHECK: %[[M:.*]] = v4f.mul %{{.*}}, %{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>)
// CHECK: v4f.add %[[M]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>)
// CHECK-NOT: v4f.batch_norm
func.func @standalone(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %p = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = v4f.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-5 : f32}
       : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A conv with two users must not be rewritten in place.
// CHECK-LABEL: func @shared_conv
// CHECK: %[[C:.*]] = v4f.conv
// CHECK: v4f.mul %[[C]]
func.func @shared_conv(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %p = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = v4f.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
       : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = v4f.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-5 : f32}
       : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
