// RUN: v4f-opt %s -split-input-file -v4f-fuse-normalizations | FileCheck %s

// LayerNorm as exporters write it, with scale and bias.
// CHECK-LABEL: func @layer_norm_affine
// CHECK: %[[LN:.*]] = v4f.layer_norm %arg0, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: v4f.reduce_mean
// CHECK-NOT: v4f.sqrt
// CHECK: return %[[LN]]
func.func @layer_norm_affine(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %g = arith.constant dense<2.0> : tensor<8xf32>
  %b = arith.constant dense<0.5> : tensor<8xf32>
  %m = v4f.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %d = v4f.sub %x, %m : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %sq = v4f.mul %d, %d : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %v = v4f.reduce_mean %sq {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %ve = v4f.add %v, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %s = v4f.sqrt %ve : tensor<2x4x1xf32>
  %n = v4f.div %d, %s : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %y = v4f.mul %n, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %z = v4f.add %b, %y : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %z : tensor<2x4x8xf32>
}

// -----

// Over the last two axes, eps added on the left, no affine tail: the scale
// is ones.
// CHECK-LABEL: func @layer_norm_two_axes
// CHECK: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK: v4f.layer_norm %arg0, %[[ONES]] {axis = 1 : i64
func.func @layer_norm_two_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %eps = arith.constant dense<1.0e-6> : tensor<1xf32>
  %m = v4f.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %d = v4f.sub %x, %m : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  %sq = v4f.mul %d, %d : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %v = v4f.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %ve = v4f.add %eps, %v : (tensor<1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %s = v4f.sqrt %ve : tensor<2x1x1xf32>
  %n = v4f.div %d, %s : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  return %n : tensor<2x4x8xf32>
}

// -----

// A scale that varies along a non-normalized dim stays a multiply after the
// fused norm.
// CHECK-LABEL: func @scale_over_rows
// CHECK: %[[LN:.*]] = v4f.layer_norm %arg0, %{{.*}} {axis = 1 : i64
// CHECK: v4f.mul %[[LN]], %{{.*}} : (tensor<4x8xf32>, tensor<4x1xf32>)
func.func @scale_over_rows(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %g = arith.constant dense<2.0> : tensor<4x1xf32>
  %m = v4f.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = v4f.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = v4f.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = v4f.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = v4f.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = v4f.sqrt %ve : tensor<4x1xf32>
  %n = v4f.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = v4f.mul %n, %g : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not a LayerNorm: the mean is over a leading axis, or the difference has
// another user.
// CHECK-LABEL: func @not_layer_norm
// CHECK-NOT: v4f.layer_norm
// CHECK: return
func.func @not_layer_norm(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = v4f.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d = v4f.sub %x, %m : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %sq = v4f.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = v4f.reduce_mean %sq {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %ve = v4f.add %v, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = v4f.sqrt %ve : tensor<1x8xf32>
  %n = v4f.div %d, %s : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %m2 = v4f.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d2 = v4f.sub %x, %m2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq2 = v4f.mul %d2, %d2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v2 = v4f.reduce_mean %sq2 {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve2 = v4f.add %v2, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s2 = v4f.sqrt %ve2 : tensor<4x1xf32>
  %n2 = v4f.div %d2, %s2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %n2, %d2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Attention's scaled, masked softmax becomes one softmax with scale and
// mask: x / 8 + mask, mask + 0.5 * x, a scale alone. A Div whose result has
// another user, a mask over a non-last axis and log_softmax stay as written.
// CHECK-LABEL: func @scaled_masked_softmax
// CHECK: v4f.softmax %arg0 mask(%arg1 : tensor<1x1x1x4xf32>) {axis = 3 : i64, scale = 1.250000e-01 : f32}
// CHECK: v4f.softmax %arg0 mask(%arg1 : tensor<1x1x1x4xf32>) {axis = 3 : i64, scale = 5.000000e-01 : f32}
// CHECK: v4f.softmax %arg0 {axis = 3 : i64, scale = 1.250000e-01 : f32}
// CHECK: %[[D:.*]] = v4f.div %arg0
// CHECK: v4f.softmax %[[D]] {axis = 3 : i64} :
// CHECK: v4f.softmax %{{.*}} {axis = 2 : i64} :
// CHECK: v4f.softmax %{{.*}} {axis = 3 : i64, mode = "log_softmax"} :
func.func @scaled_masked_softmax(%x: tensor<1x2x4x4xf32>, %m: tensor<1x1x1x4xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %c8 = arith.constant dense<8.0> : tensor<f32>
  %h = arith.constant dense<0.5> : tensor<f32>
  %d0 = v4f.div %x, %c8 : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %a0 = v4f.add %d0, %m : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %y0 = v4f.softmax %a0 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %s1 = v4f.mul %h, %x : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a1 = v4f.add %m, %s1 : (tensor<1x1x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y1 = v4f.softmax %a1 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %d2 = v4f.div %x, %c8 : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %y2 = v4f.softmax %d2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %d3 = v4f.div %x, %c8 : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %y3 = v4f.softmax %d3 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %a4 = v4f.add %x, %m : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %y4 = v4f.softmax %a4 {axis = 2 : i64} : tensor<1x2x4x4xf32>
  %a5 = v4f.add %x, %m : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %y5 = v4f.softmax %a5 {axis = 3 : i64, mode = "log_softmax"} : tensor<1x2x4x4xf32>
  return %y0, %y1, %y2, %y3, %d3, %y4, %y5 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// torch's scaled_dot_product_attention export: Q and K^T each multiplied by
// sqrt(scale), the scores plus a mask, Softmax, then Where(IsNaN(p), 0, p).
// The factors move into the softmax's scale (0.5 * 0.25), the matmul reads
// the unscaled operands, and the guard becomes nan_to_zero. A guard whose
// softmax has another user stays, and so does a guard selecting a nonzero
// value.
// CHECK-LABEL: func @sdpa_export
// CHECK: %[[S:.*]] = v4f.matmul %arg0, %arg1 :
// CHECK-NEXT: %[[P:.*]] = v4f.softmax %[[S]] mask(%arg2 : tensor<1x1x1x4xf32>) {axis = 3 : i64, nan_to_zero = true, scale = 1.250000e-01 : f32}
// CHECK-NEXT: %[[O:.*]] = v4f.matmul %[[P]], %arg0 :
// CHECK: %[[Q:.*]] = v4f.softmax %arg3 {axis = 3 : i64} :
// CHECK: v4f.elementwise %[[Q]]
// CHECK: arith.cmpf uno
// CHECK: v4f.elementwise
// CHECK: arith.select
// CHECK: %[[R:.*]] = v4f.softmax %arg3 {axis = 3 : i64} :
// CHECK: v4f.elementwise %[[R]]
// CHECK: return %[[O]]
func.func @sdpa_export(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %m: tensor<1x1x1x4xf32>,
                       %x: tensor<1x2x4x4xf32>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %a = arith.constant dense<0.5> : tensor<f32>
  %b = arith.constant dense<0.25> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  %qs = v4f.mul %q, %a : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %ks = v4f.mul %b, %kt : (tensor<f32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %s = v4f.matmul %qs, %ks : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %sm = v4f.add %s, %m : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = v4f.softmax %sm {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %n = v4f.elementwise %p : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi1> {
  ^bb0(%e: f32):
    %c = arith.cmpf uno, %e, %e : f32
    v4f.yield %c : i1
  }
  %g = v4f.elementwise %n, %zero, %p : (tensor<1x2x4x4xi1>, tensor<1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%c: i1, %z: f32, %v: f32):
    %r = arith.select %c, %z, %v : f32
    v4f.yield %r : f32
  }
  %o = v4f.matmul %g, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // The probabilities have another user: the guard stays.
  %p2 = v4f.softmax %x {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %n2 = v4f.elementwise %p2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi1> {
  ^bb0(%e: f32):
    %c = arith.cmpf uno, %e, %e : f32
    v4f.yield %c : i1
  }
  %g2 = v4f.elementwise %n2, %zero, %p2 : (tensor<1x2x4x4xi1>, tensor<1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%c: i1, %z: f32, %v: f32):
    %r = arith.select %c, %z, %v : f32
    v4f.yield %r : f32
  }
  // NaN -> 1 is not the guard.
  %p3 = v4f.softmax %x {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %n3 = v4f.elementwise %p3 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi1> {
  ^bb0(%e: f32):
    %c = arith.cmpf uno, %e, %e : f32
    v4f.yield %c : i1
  }
  %g3 = v4f.elementwise %n3, %one, %p3 : (tensor<1x2x4x4xi1>, tensor<1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%c: i1, %z: f32, %v: f32):
    %r = arith.select %c, %z, %v : f32
    v4f.yield %r : f32
  }
  return %o, %g2, %p2, %g3 : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
