// RUN: v4f-opt %s -split-input-file -v4f-decompose-activations | FileCheck %s

// Exact Gelu: 0.5 * x * (1 + erf(x * 1/sqrt(2))) in one elementwise body.
// CHECK-LABEL: func @gelu_erf
// CHECK: %[[Y:.*]] = v4f.elementwise %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32):
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[R2:.*]] = arith.constant 0.707106769 : f32
// CHECK: %[[S:.*]] = arith.mulf %[[X]], %[[R2]] : f32
// CHECK: %[[E:.*]] = math.erf %[[S]] : f32
// CHECK: %[[HX:.*]] = arith.mulf %[[HALF]], %[[X]] : f32
// CHECK: %[[P:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK: %[[R:.*]] = arith.mulf %[[HX]], %[[P]] : f32
// CHECK: v4f.yield %[[R]] : f32
// CHECK-NOT: v4f.gelu
// CHECK: return %[[Y]]
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = v4f.gelu %x : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// tanh approximation, computed in the input's type (float16 here).
// CHECK-LABEL: func @gelu_tanh_f16
// CHECK: v4f.elementwise %arg0 : (tensor<4xf16>) -> tensor<4xf16> {
// CHECK: arith.constant 7.978{{[0-9]*}}e-01 : f16
// CHECK: arith.constant 4.47{{[0-9]*}}e-02 : f16
// CHECK: math.tanh %{{.*}} : f16
// CHECK-NOT: math.erf
// CHECK-NOT: v4f.gelu
func.func @gelu_tanh_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = v4f.gelu %x {approximate = "tanh"} : tensor<4xf16>
  return %y : tensor<4xf16>
}
