// RUN: v4f-opt %s --v4f-cpu-approximate-math | FileCheck %s

// exp/tanh become polynomial arithmetic (no libm call); asin/acos become
// calls to libm (their approximations are not accurate enough).
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK: call @asinf
// CHECK: call @acosf
// CHECK-DAG: func.func private @asinf(f32) -> f32
// CHECK-DAG: func.func private @acosf(f32) -> f32
func.func @kernel(%x: f32, %v: vector<8xf32>) -> (f32, vector<8xf32>, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %v : vector<8xf32>
  %2 = math.asin %x : f32
  %3 = math.acos %x : f32
  return %0, %1, %2, %3 : f32, vector<8xf32>, f32, f32
}
