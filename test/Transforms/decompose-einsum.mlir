// RUN: v4f-opt %s -split-input-file -v4f-decompose-einsum | FileCheck %s

// A batched contraction is one batched matmul (the identity reshapes around
// it fold away in the canonicalizer).
// CHECK-LABEL: func @batched
// CHECK: %[[A:.*]] = v4f.reshape %arg0 {{.*}} -> tensor<2x3x4xf32>
// CHECK: %[[B:.*]] = v4f.reshape %arg1 {{.*}} -> tensor<2x4x5xf32>
// CHECK: %[[MM:.*]] = v4f.matmul %[[A]], %[[B]] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[Y:.*]] = v4f.reshape %[[MM]] {{.*}} -> tensor<2x3x5xf32>
// CHECK-NOT: v4f.einsum
// CHECK: return %[[Y]]
func.func @batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %y = v4f.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// A repeated label takes the diagonal: reshape to [.., n*n], slice with step n+1.
// CHECK-LABEL: func @diagonal
// CHECK: %[[FLAT:.*]] = v4f.reshape %arg0 {{.*}} : (tensor<6x3x3xf32>) -> tensor<6x9xf32>
// CHECK: %[[DIAG:.*]] = v4f.slice %[[FLAT]], {{.*}} -> tensor<6x3xf32>
// CHECK: return %[[DIAG]]
func.func @diagonal(%x: tensor<6x3x3xf32>) -> tensor<6x3xf32> {
  %y = v4f.einsum %x {equation = "bii->bi"} : (tensor<6x3x3xf32>) -> tensor<6x3xf32>
  return %y : tensor<6x3xf32>
}

// -----

// float64 has no matmul: broadcast multiply, then a sum over the contracted dim.
// CHECK-LABEL: func @float64
// CHECK: v4f.elementwise %{{.*}}, %{{.*}} : (tensor<3x4x1xf64>, tensor<1x4x2xf64>) -> tensor<3x4x2xf64>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: v4f.reduce %{{.*}} {axes = array<i64: 1>, keepdims = false, kind = "sum"} : (tensor<3x4x2xf64>) -> tensor<3x2xf64>
func.func @float64(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> tensor<3x2xf64> {
  %y = v4f.einsum %a, %b {equation = "ij,jk"} : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>
  return %y : tensor<3x2xf64>
}

// -----

// float16 is computed in float32 and converted back; a label in one operand
// only and not in the output is summed first.
// CHECK-LABEL: func @float16_sum
// CHECK: %[[F:.*]] = v4f.elementwise %arg0 : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = v4f.reduce %[[F]] {axes = array<i64: 1>, keepdims = false, kind = "sum"} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK: %[[H:.*]] = v4f.elementwise %[[S]] : (tensor<2xf32>) -> tensor<2xf16>
// CHECK: return %[[H]]
func.func @float16_sum(%x: tensor<2x3xf16>) -> tensor<2xf16> {
  %y = v4f.einsum %x {equation = "ij->i"} : (tensor<2x3xf16>) -> tensor<2xf16>
  return %y : tensor<2xf16>
}

// -----

// Sizes known only at run time: the batched matmul's operands are run-time
// reshapes whose contracted and free sizes the plan computes; the diagonal
// of a run-time square is a slice whose end and step (n * n, n + 1) are
// computed too.
// CHECK-LABEL: func @runtime_sizes
// CHECK: v4f.matmul %{{.*}}, %{{.*}} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
// CHECK: arith.muli
// CHECK: v4f.reshape %{{.*}} shape(%{{.*}}) {allowzero = true
// CHECK: v4f.slice %{{.*}}, %{{.*}}, %{{.*}} axes(%{{.*}}) steps(%{{.*}}) : (tensor<?xf32>, {{.*}}) -> tensor<?xf32>
// CHECK-NOT: v4f.einsum
func.func @runtime_sizes(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>, %d: tensor<?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?xf32>) {
  %y = v4f.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %z = v4f.einsum %d {equation = "ii->i"} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %y, %z : tensor<?x?x?xf32>, tensor<?xf32>
}
