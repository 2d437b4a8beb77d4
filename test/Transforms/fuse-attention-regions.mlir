// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions,v4f-fuse-attention-regions))" -split-input-file | FileCheck %s
// RUN: v4f-opt %s --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-assign-placement{targets=cuda},func.func(v4f-fuse-attention-regions))" -split-input-file | FileCheck %s --check-prefix=CUDA

// BERT's attention: the head transposes of Q, K (to K^T) and V, the scores
// matmul, the scaled masked softmax, the value matmul and the transpose back
// become one region (one fused kernel on the CPU, and on the GPU when all of
// them are placed there: lib/Codegen/CUDA/AttentionKernel.cpp).
// CHECK-LABEL: func.func @bert
// CHECK: %[[R:.*]] = v4f.dispatch -> tensor<1x16x4x8xf32> attributes {v4f.fused_kernel = "attention"} {
// CHECK-NEXT: v4f.transpose %arg0
// CHECK-NEXT: v4f.transpose %arg1
// CHECK-NEXT: v4f.transpose %arg2
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.softmax
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.transpose
// CHECK-NEXT: v4f.dispatch_return
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
// CUDA-LABEL: func.func @bert
// CUDA: %[[R:.*]] = v4f.dispatch -> tensor<1x16x4x8xf32> attributes {v4f.fused_kernel = "attention", v4f.placement = "cuda"} {
// CUDA-NEXT: v4f.transpose %arg0
// CUDA-NEXT: v4f.transpose %arg1
// CUDA-NEXT: v4f.transpose %arg2
// CUDA-NEXT: v4f.matmul
// CUDA-NEXT: v4f.softmax
// CUDA-NEXT: v4f.matmul
// CUDA-NEXT: v4f.transpose
// CUDA-NEXT: v4f.dispatch_return
// CUDA-NEXT: }
// CUDA-NEXT: return %[[R]]
func.func @bert(%q: tensor<1x16x4x8xf32>, %k: tensor<1x16x4x8xf32>, %v: tensor<1x16x4x8xf32>,
                %mask: tensor<1x1x1x16xf32>) -> tensor<1x16x4x8xf32> {
  %0 = v4f.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x8xf32>) -> tensor<1x4x16x8xf32>
  %1 = v4f.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x4x8xf32>) -> tensor<1x4x8x16xf32>
  %2 = v4f.transpose %v {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x8xf32>) -> tensor<1x4x16x8xf32>
  %3 = v4f.matmul %0, %1 : (tensor<1x4x16x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x16x16xf32>
  %4 = v4f.softmax %3 mask(%mask : tensor<1x1x1x16xf32>) {axis = 3 : i64, scale = 1.250000e-01 : f32} : tensor<1x4x16x16xf32>
  %5 = v4f.matmul %4, %2 : (tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %6 = v4f.transpose %5 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x16x8xf32>) -> tensor<1x16x4x8xf32>
  return %6 : tensor<1x16x4x8xf32>
}

// -----

// Transposes stay outside when they would move the dim the kernel reads or
// writes in vector runs (V's and the output's last dim), or when their
// result has another use; the core still fuses.
// CHECK-LABEL: func.func @partial
// CHECK: v4f.dispatch ->
// CHECK-NEXT: v4f.transpose %arg2 {perm = array<i64: 0, 1, 3, 2>}
// CHECK: v4f.dispatch ->
// CHECK-NEXT: v4f.transpose %arg0
// CHECK: %[[F:.*]] = v4f.dispatch -> tensor<1x2x8x8xf32> attributes {v4f.fused_kernel = "attention"} {
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.softmax
// CHECK-NEXT: v4f.matmul
// CHECK-NEXT: v4f.dispatch_return
// CHECK: v4f.dispatch ->
// CHECK-NEXT: v4f.transpose %[[F]] {perm = array<i64: 0, 1, 3, 2>}
func.func @partial(%q: tensor<1x8x2x8xf32>, %kt: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>)
    -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %vt = v4f.transpose %v {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %qt = v4f.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x8xf32>) -> tensor<1x2x8x8xf32>
  %s = v4f.matmul %qt, %kt : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p = v4f.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xf32>
  %o = v4f.matmul %p, %vt : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ot = v4f.transpose %o {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %ot, %qt : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// Not attention: probabilities used twice, a softmax over another axis, a
// scores matmul with a bias, dynamic shapes, broadcast batch dims.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-15: v4f.dispatch ->
// CHECK-NOT: v4f.dispatch ->
func.func @not_fused(%a: tensor<2x8x4xf32>, %b: tensor<2x4x8xf32>, %c: tensor<2x8x4xf32>, %bias: tensor<8xf32>,
                     %d: tensor<?x8x4xf32>, %e: tensor<?x4x8xf32>, %f: tensor<?x8x4xf32>, %g: tensor<4x8xf32>)
    -> (tensor<2x8x4xf32>, tensor<2x8x8xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<?x8x4xf32>,
        tensor<2x8x4xf32>) {
  %s0 = v4f.matmul %a, %b : (tensor<2x8x4xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %p0 = v4f.softmax %s0 {axis = 2 : i64} : tensor<2x8x8xf32>
  %o0 = v4f.matmul %p0, %c : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %s1 = v4f.matmul %a, %b : (tensor<2x8x4xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %p1 = v4f.softmax %s1 {axis = 1 : i64} : tensor<2x8x8xf32>
  %o1 = v4f.matmul %p1, %c : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %s2 = v4f.matmul %a, %b bias(%bias) : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %p2 = v4f.softmax %s2 {axis = 2 : i64} : tensor<2x8x8xf32>
  %o2 = v4f.matmul %p2, %c : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %s3 = v4f.matmul %d, %e : (tensor<?x8x4xf32>, tensor<?x4x8xf32>) -> tensor<?x8x8xf32>
  %p3 = v4f.softmax %s3 {axis = 2 : i64} : tensor<?x8x8xf32>
  %o3 = v4f.matmul %p3, %f : (tensor<?x8x8xf32>, tensor<?x8x4xf32>) -> tensor<?x8x4xf32>
  %s4 = v4f.matmul %a, %g : (tensor<2x8x4xf32>, tensor<4x8xf32>) -> tensor<2x8x8xf32>
  %p4 = v4f.softmax %s4 {axis = 2 : i64} : tensor<2x8x8xf32>
  %o4 = v4f.matmul %p4, %c : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o0, %p0, %o1, %o2, %o3, %o4 : tensor<2x8x4xf32>, tensor<2x8x8xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>,
                                       tensor<?x8x4xf32>, tensor<2x8x4xf32>
}
