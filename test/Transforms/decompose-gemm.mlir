// RUN: v4f-opt %s -split-input-file -v4f-decompose-gemm | FileCheck %s

// alpha scales op(b), beta scales c; the transposes are explicit.
// CHECK-LABEL: func @scaled_transposed
// CHECK: %[[AT:.*]] = v4f.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
// CHECK: %[[BT:.*]] = v4f.transpose %arg1 {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
// CHECK: %[[ALPHA:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[BS:.*]] = v4f.mul %[[BT]], %[[ALPHA]] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
// CHECK: %[[M:.*]] = v4f.matmul %[[AT]], %[[BS]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: %[[BETA:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[CS:.*]] = v4f.mul %arg2, %[[BETA]] : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
// CHECK: %[[Y:.*]] = v4f.add %[[M]], %[[CS]] : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: v4f.gemm
// CHECK: return %[[Y]]
func.func @scaled_transposed(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = v4f.gemm %a, %b, %c {alpha = 2.0 : f32, beta = 0.5 : f32, trans_a = true, trans_b = true}
       : (tensor<8x4xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Default attributes and no c: one matmul, nothing else.
// CHECK-LABEL: func @plain
// CHECK-NEXT: %[[M:.*]] = v4f.matmul %arg0, %arg1 : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: return %[[M]]
func.func @plain(%a: tensor<?x8xf32>, %b: tensor<8x3xf32>) -> tensor<?x3xf32> {
  %y = v4f.gemm %a, %b : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// beta = 0: c does not contribute and is not added.
// CHECK-LABEL: func @beta_zero
// CHECK: v4f.matmul
// CHECK-NOT: v4f.add
// CHECK-NOT: v4f.gemm
func.func @beta_zero(%a: tensor<2x8xf32>, %b: tensor<8x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = v4f.gemm %a, %b, %c {beta = 0.0 : f32} : (tensor<2x8xf32>, tensor<8x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A static dim of c refines a dynamic M; the add keeps it.
// CHECK-LABEL: func @c_refines_m
// CHECK: %[[M:.*]] = v4f.matmul %arg0, %arg1 : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
// CHECK: v4f.add %[[M]], %arg2 : (tensor<?x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
func.func @c_refines_m(%a: tensor<?x8xf32>, %b: tensor<8x3xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %y = v4f.gemm %a, %b, %c : (tensor<?x8xf32>, tensor<8x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
