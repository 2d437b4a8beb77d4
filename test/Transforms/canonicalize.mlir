// RUN: v4f-opt %s -split-input-file -canonicalize | FileCheck %s

// Constant folding of what the importer leaves for constant weights.
// CHECK-LABEL: func @fold_transpose_and_scale
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[2.000000e+00, 6.000000e+00], [4.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK: v4f.matmul %arg0, %[[C]]
func.func @fold_transpose_and_scale(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %t = v4f.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = v4f.mul %t, %two : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %m = v4f.matmul %a, %s : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %m : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func @identity_ops
// CHECK-NOT: v4f.transpose
// CHECK-NOT: v4f.reshape
// CHECK: return %arg0
func.func @identity_ops(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = v4f.transpose %a {perm = array<i64: 0, 1>} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %r = v4f.reshape %t {dim_sources = array<i64: 0, 1>} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func @fold_broadcast_arith
// CHECK: arith.constant dense<{{\[}}[1.100000e+01, 2.200000e+01], [1.300000e+01, 2.400000e+01]]> : tensor<2x2xf32>
func.func @fold_broadcast_arith() -> tensor<2x2xf32> {
  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %s = v4f.add %a, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// A select_branch with a constant condition folds to the taken side (when
// that side has the result type), and one with equal sides to that side.
// CHECK-LABEL: func @fold_select_branch
// CHECK-DAG: %[[P:.*]] = v4f.select_branch %arg2, %arg0, %arg1
// CHECK-DAG: %[[Q:.*]] = v4f.select_branch %{{.*}}, %arg0, %arg3
// CHECK: return %arg0, %arg1, %arg0, %[[P]], %[[Q]]
func.func @fold_select_branch(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<i1>, %d: tensor<3xf32>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<?xf32>) {
  %t = arith.constant dense<true> : tensor<i1>
  %f = arith.constant dense<0> : tensor<1xi64>
  %0 = v4f.select_branch %t, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = v4f.select_branch %f, %a, %b : (tensor<1xi64>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = v4f.select_branch %c, %a, %a : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = v4f.select_branch %c, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // A constant condition picking a side of another type stays.
  %4 = v4f.select_branch %t, %a, %d : (tensor<i1>, tensor<2xf32>, tensor<3xf32>) -> tensor<?xf32>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<?xf32>
}

// -----

// A side that cannot run (else_error) is neither picked by a constant
// condition nor merged away when both operands are its placeholder; the
// other side is still picked.
// CHECK-LABEL: func @select_branch_error_side
// CHECK: %[[P:.*]] = v4f.select_branch %arg1, %arg0, %arg0 {else_error = "bad"}
// CHECK: %[[Q:.*]] = v4f.select_branch %{{.*}}, %arg0, %arg0 {else_error = "bad"}
// CHECK: return %[[P]], %[[Q]], %arg0
func.func @select_branch_error_side(%a: tensor<2xf32>, %c: tensor<i1>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %t = arith.constant dense<true> : tensor<i1>
  %f = arith.constant dense<false> : tensor<i1>
  %0 = v4f.select_branch %c, %a, %a {else_error = "bad"} : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = v4f.select_branch %f, %a, %a {else_error = "bad"} : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = v4f.select_branch %t, %a, %a {else_error = "bad"} : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Pow by a constant 2 squares with a multiply, by 3 cubes with two (GPT-2's
// tanh GELU), by 1 is the input; other exponents and run-time ones keep powf.
// CHECK-LABEL: func @pow_by_constant
// CHECK: %[[SQ:.*]] = v4f.mul %arg0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[SQ2:.*]] = v4f.mul %arg0, %arg0
// CHECK: %[[CUBE:.*]] = v4f.mul %[[SQ2]], %arg0
// CHECK: %[[RT:.*]] = v4f.elementwise %arg0, %arg1 :
// CHECK: math.powf
// CHECK: %[[ROOT:.*]] = v4f.elementwise %arg0, %{{.*}} :
// CHECK: math.powf
// CHECK: return %[[SQ]], %arg0, %[[CUBE]], %[[RT]], %[[ROOT]]
func.func @pow_by_constant(%x: tensor<2x3xf32>, %e: tensor<f32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %two = arith.constant dense<2.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %0 = v4f.elementwise %x, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = math.powf %a, %b : f32
    v4f.yield %p : f32
  }
  %1 = v4f.elementwise %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = math.powf %a, %b : f32
    v4f.yield %p : f32
  }
  %2 = v4f.elementwise %x, %three : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = math.powf %a, %b : f32
    v4f.yield %p : f32
  }
  %3 = v4f.elementwise %x, %e : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = math.powf %a, %b : f32
    v4f.yield %p : f32
  }
  %4 = v4f.elementwise %x, %half : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = math.powf %a, %b : f32
    v4f.yield %p : f32
  }
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A v4f.elementwise over constants only folds to its value (evaluated with
// the body ops' folders, broadcasting included); one with a run-time input,
// or with more than 4096 elements, stays.
// CHECK-LABEL: func @elementwise_fold
// CHECK-DAG: %[[V:.*]] = arith.constant dense<{{\[\[}}1.100000e+01, 2.100000e+01], [1.200000e+01, 2.200000e+01]]> : tensor<2x2xf32>
// CHECK-DAG: %[[BIG:.*]] = v4f.elementwise %{{.*}} : (tensor<4097xf32>) -> tensor<4097xf32>
// CHECK-DAG: %[[RT:.*]] = v4f.elementwise %arg0, %{{.*}} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
// CHECK: return %[[V]], %[[RT]], %[[BIG]]
func.func @elementwise_fold(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<4097xf32>) {
  %a = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = arith.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %big = arith.constant dense<1.0> : tensor<4097xf32>
  %0 = v4f.elementwise %a, %b : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    v4f.yield %s : f32
  }
  %1 = v4f.elementwise %x, %a : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    v4f.yield %s : f32
  }
  %2 = v4f.elementwise %big : (tensor<4097xf32>) -> tensor<4097xf32> {
  ^bb0(%p: f32):
    %s = arith.addf %p, %p : f32
    v4f.yield %s : f32
  }
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<4097xf32>
}
