// RUN: v4f-opt %s -split-input-file -verify-diagnostics -v4f-decompose-window-conv | FileCheck %s

// 3-D conv with static shapes: the input padded by the constant pads, one
// gather per spatial dim (axes 2, 4, 6 of the growing tap tensor), the taps
// moved before the output positions, a grouped matmul and the bias.
// CHECK-LABEL: func @conv3d
// CHECK: %[[P:.*]] = v4f.pad %arg0, %{{.*}} axes(%{{.*}}) {mode = "constant"} : {{.*}} -> tensor<1x3x6x7x6xf32>
// CHECK: v4f.range
// CHECK: %[[G0:.*]] = v4f.gather %[[P]], %{{.*}} {axis = 2 : i64}
// CHECK: %[[G1:.*]] = v4f.gather %[[G0]], %{{.*}} {axis = 4 : i64}
// CHECK: %[[G2:.*]] = v4f.gather %[[G1]], %{{.*}} {axis = 6 : i64}
// CHECK: v4f.transpose %[[G2]] {perm = array<i64: 0, 1, 2, 4, 6, 3, 5, 7>}
// CHECK: v4f.matmul
// CHECK: v4f.add
// CHECK-NOT: v4f.window_conv
func.func @conv3d(%x: tensor<1x3x4x5x6xf32>, %w: tensor<2x3x3x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x3x4xf32> {
  %y = v4f.window_conv %x, %w bias(%b) {strides = array<i64: 1, 2, 1>, dilations = array<i64: 1, 1, 1>,
                                        pads = array<i64: 1, 1, 0, 1, 1, 0>, groups = 1 : i64}
       : (tensor<1x3x4x5x6xf32>, tensor<2x3x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x3x4xf32>
  return %y : tensor<1x2x4x3x4xf32>
}

// -----

// A 1-D conv whose kernel and channels are known only at run time: the
// output length (P - dilation * K + dilation - 1) / stride + 1 and the
// matmul's depth C * K are computed for the plan; the views are run-time
// reshapes.
// CHECK-LABEL: func @runtime_weight
// CHECK-DAG: %[[K:.*]] = v4f.shape %arg1 {end = 3 : i64, start = 2 : i64}
// CHECK: arith.muli
// CHECK: arith.subi
// CHECK: arith.divsi
// CHECK: v4f.gather %arg0, %{{.*}} {axis = 2 : i64}
// CHECK: v4f.reshape %{{.*}} shape(%{{.*}}) {allowzero = true
// CHECK: v4f.matmul %{{.*}}, %{{.*}} : (tensor<1x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
// CHECK-NOT: v4f.window_conv
func.func @runtime_weight(%x: tensor<?x?x?xf32>, %w: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %y = v4f.window_conv %x, %w {strides = array<i64: 2>, dilations = array<i64: 3>, pads = array<i64: 0, 0>,
                               groups = 2 : i64}
       : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// -----

// expected-error@+2 {{'v4f.window_conv' op strides and dilations need one entry per spatial dim, pads two}}
func.func @bad_attrs(%x: tensor<1x3x8xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x2x6xf32> {
  %y = v4f.window_conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>,
                               groups = 1 : i64}
       : (tensor<1x3x8xf32>, tensor<2x3x3xf32>) -> tensor<1x2x6xf32>
  return %y : tensor<1x2x6xf32>
}
