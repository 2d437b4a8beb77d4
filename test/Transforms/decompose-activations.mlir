// RUN: v4f-opt %s -split-input-file -v4f-decompose-activations | FileCheck %s

// Exact Gelu on float32: x * (1 + erf(x * 1/sqrt(2))) * 0.5 as the named
// ops exporters write, which v4f-fuse-epilogues turns into a conv/matmul
// "gelu" epilogue (and region formation into one pass otherwise).
// CHECK-LABEL: func @gelu_erf
// CHECK: %[[R2:[a-z_0-9]+]] = arith.constant dense<0.707106769> : tensor<f32>
// CHECK: %[[S:[0-9]+]] = v4f.mul %arg0, %[[R2]]
// CHECK: %[[E:[0-9]+]] = v4f.erf %[[S]]
// CHECK: %[[ONE:[a-z_0-9]+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[P:[0-9]+]] = v4f.add %[[E]], %[[ONE]]
// CHECK: %[[XP:[0-9]+]] = v4f.mul %arg0, %[[P]]
// CHECK: %[[HALF:[a-z_0-9]+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[Y:[0-9]+]] = v4f.mul %[[XP]], %[[HALF]]
// CHECK-NOT: v4f.gelu
// CHECK: return %[[Y]]
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = v4f.gelu %x : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Exact Gelu on float16: one elementwise body in the input's type.
// CHECK-LABEL: func @gelu_erf_f16
// CHECK: v4f.elementwise %arg0 : (tensor<4xf16>) -> tensor<4xf16> {
// CHECK: math.erf %{{.*}} : f16
// CHECK-NOT: v4f.gelu
func.func @gelu_erf_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = v4f.gelu %x : tensor<4xf16>
  return %y : tensor<4xf16>
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

// -----

// tanh approximation on float32: the named ops of the tanh form.
// CHECK-LABEL: func @gelu_tanh_f32
// CHECK: %[[SQ:[0-9]+]] = v4f.mul %arg0, %arg0
// CHECK: %[[CUBE:[0-9]+]] = v4f.mul %[[SQ]], %arg0
// CHECK: v4f.tanh
// CHECK-NOT: v4f.elementwise
// CHECK-NOT: v4f.gelu
func.func @gelu_tanh_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = v4f.gelu %x {approximate = "tanh"} : tensor<4xf32>
  return %y : tensor<4xf32>
}
