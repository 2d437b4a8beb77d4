// RUN: v4f-opt %s | FileCheck %s
// RUN: v4f-opt %s | v4f-opt | FileCheck %s

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: v4f.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = v4f.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: v4f.sub
  %1 = v4f.sub %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: v4f.mul
  %2 = v4f.mul %1, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: v4f.div
  %3 = v4f.div %2, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: v4f.relu %{{.*}} : tensor<2x3xf32>
  %4 = v4f.relu %3 : tensor<2x3xf32>
  // CHECK: v4f.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32}
  %5 = v4f.leaky_relu %4 {alpha = 0.1 : f32} : tensor<2x3xf32>
  // CHECK: v4f.clip %{{.*}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
  %6 = v4f.clip %5 {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x3xf32>
  %7 = v4f.sigmoid %6 : tensor<2x3xf32>
  %8 = v4f.tanh %7 : tensor<2x3xf32>
  %9 = v4f.erf %8 : tensor<2x3xf32>
  %10 = v4f.exp %9 : tensor<2x3xf32>
  // CHECK: v4f.sqrt
  %11 = v4f.sqrt %10 : tensor<2x3xf32>
  // CHECK: v4f.hard_sigmoid %{{.*}} {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32}
  %12 = v4f.hard_sigmoid %11 {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<2x3xf32>
  // CHECK: v4f.hard_swish %{{.*}} : tensor<2x3xf32>
  %13 = v4f.hard_swish %12 : tensor<2x3xf32>
  return %13 : tensor<2x3xf32>
}

// CHECK-LABEL: func @dynamic_broadcast
func.func @dynamic_broadcast(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {
  // CHECK: (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %0 = v4f.add %a, %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// CHECK-LABEL: func @conv
func.func @conv(%x: tensor<?x4x8x8xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>,
                %r: tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32> {
  // CHECK: v4f.conv %{{.*}}, %{{.*}} bias(%{{.*}}) residual(%{{.*}}) {activation = "relu", dilations = array<i64: 1, 1>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %0 = v4f.conv %x, %w bias(%b) residual(%r) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
         pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64, activation = "relu"}
       : (tensor<?x4x8x8xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>, tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  return %0 : tensor<?x8x4x4xf32>
}

// CHECK-LABEL: func @matmul
func.func @matmul(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<2x4x16xf32> {
  // CHECK: v4f.matmul %{{.*}}, %{{.*}} bias(%{{.*}})
  %0 = v4f.matmul %a, %b bias(%bias) : (tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// CHECK-LABEL: func @pools_and_norms
func.func @pools_and_norms(%x: tensor<1x4x7x7xf32>, %s: tensor<4xf32>, %s7: tensor<7xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>, tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>) {
  // CHECK: v4f.max_pool
  %0 = v4f.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
         pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: v4f.avg_pool
  %1 = v4f.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
         pads = array<i64: 0, 0, 0, 0>, count_include_pad = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x3x3xf32>
  // CHECK: v4f.reduce_mean
  %2 = v4f.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
  // CHECK: v4f.softmax
  %3 = v4f.softmax %x {axis = 3 : i64} : tensor<1x4x7x7xf32>
  // CHECK: v4f.layer_norm
  %4 = v4f.layer_norm %x, %s7 {axis = 3 : i64, epsilon = 1.0e-5 : f32} : (tensor<1x4x7x7xf32>, tensor<7xf32>) -> tensor<1x4x7x7xf32>
  // CHECK: v4f.batch_norm
  %5 = v4f.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f32} : (tensor<1x4x7x7xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>, tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<?x4x2xf32>, %t: tensor<100x8xf32>, %ids: tensor<2x3xi64>) -> (tensor<?x8xf32>, tensor<2x?x4xf32>, tensor<?x4x4xf32>, tensor<2x3x8xf32>) {
  // CHECK: v4f.reshape %{{.*}} {dim_sources = array<i64: 0, -1>}
  %0 = v4f.reshape %x {dim_sources = array<i64: 0, -1>} : (tensor<?x4x2xf32>) -> tensor<?x8xf32>
  // CHECK: v4f.transpose %{{.*}} {perm = array<i64: 2, 0, 1>}
  %1 = v4f.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<?x4x2xf32>) -> tensor<2x?x4xf32>
  // CHECK: v4f.concat
  %2 = v4f.concat %x, %x {axis = 2 : i64} : (tensor<?x4x2xf32>, tensor<?x4x2xf32>) -> tensor<?x4x4xf32>
  // CHECK: v4f.gather
  %3 = v4f.gather %t, %ids {axis = 0 : i64} : (tensor<100x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
  return %0, %1, %2, %3 : tensor<?x8xf32>, tensor<2x?x4xf32>, tensor<?x4x4xf32>, tensor<2x3x8xf32>
}

// CHECK-LABEL: func @generic_elementwise
func.func @generic_elementwise(%a: tensor<2x3xui8>, %b: tensor<3xui8>, %c: tensor<2x1xi1>) -> (tensor<2x3xui8>, tensor<2x3xi1>) {
  // CHECK: v4f.elementwise %{{.*}}, %{{.*}} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8> {
  // CHECK: ^bb0(%{{.*}}: i8, %{{.*}}: i8):
  // CHECK: arith.divui
  // CHECK: v4f.yield %{{.*}} : i8
  %0 = v4f.elementwise %a, %b : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8> {
  ^bb0(%x: i8, %y: i8):
    %q = arith.divui %x, %y : i8
    v4f.yield %q : i8
  }
  // CHECK: v4f.elementwise %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xi1>
  %1 = v4f.elementwise %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xi1> {
  ^bb0(%p: i1, %x: i8, %y: i8):
    %lt = arith.cmpi ult, %x, %y : i8
    %r = arith.andi %p, %lt : i1
    v4f.yield %r : i1
  }
  return %0, %1 : tensor<2x3xui8>, tensor<2x3xi1>
}

// CHECK-LABEL: func @shape_values
func.func @shape_values(%x: tensor<?x4xf32>, %s: tensor<2xi64>, %a: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x4xf32>, tensor<2xi64>, tensor<?x?xf32>, tensor<?xi64>) {
  // CHECK: v4f.reshape %{{.*}} shape(%{{.*}}) {dim_sources = array<i64: -1, -1>}
  %0 = v4f.reshape %x shape(%s) {dim_sources = array<i64: -1, -1>} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: v4f.expand
  %1 = v4f.expand %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: v4f.unsqueeze
  %2 = v4f.unsqueeze %x, %a : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  // CHECK: v4f.slice %{{.*}}, %{{.*}}, %{{.*}} axes(%{{.*}})
  %3 = v4f.slice %x, %a, %a axes(%a) : (tensor<?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  // CHECK: v4f.shape %{{.*}} {end = 2 : i64, start = 0 : i64}
  %4 = v4f.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  // CHECK: v4f.reduce %{{.*}} axes(%{{.*}}) {axes = array<i64>, keepdims = true, kind = "l2"}
  %5 = v4f.reduce %x axes(%a) {kind = "l2", axes = array<i64>, keepdims = true} : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  // CHECK: v4f.arg_reduce
  %6 = v4f.arg_reduce %x {kind = "max", axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<?x4xf32>) -> tensor<?xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x4xf32>, tensor<2xi64>, tensor<?x?xf32>, tensor<?xi64>
}

// CHECK-LABEL: func @more_ops
func.func @more_ops(%x: tensor<6x4xf32>, %s: tensor<2xi64>, %p: tensor<4xi64>, %i: tensor<6x2xi64>, %n: tensor<i64>) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<6x2xf32>, tensor<6x4xf32>, tensor<?xi64>) {
  // CHECK: v4f.split %{{.*}} {axis = 0 : i64, sizes = array<i64: 2, 4>}
  %a, %b = v4f.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  // CHECK: v4f.fill %{{.*}} {value = 1.000000e+00 : f32}
  %f = v4f.fill %s {value = 1.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: v4f.pad %{{.*}}, %{{.*}} {mode = "reflect"}
  %q = v4f.pad %x, %p {mode = "reflect"} : (tensor<6x4xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  // CHECK: v4f.gather_elements
  %g = v4f.gather_elements %x, %i {axis = 1 : i64} : (tensor<6x4xf32>, tensor<6x2xi64>) -> tensor<6x2xf32>
  // CHECK: v4f.trilu %{{.*}} k(%{{.*}}) {upper = false}
  %t = v4f.trilu %x k(%n) {upper = false} : (tensor<6x4xf32>, tensor<i64>) -> tensor<6x4xf32>
  // CHECK: v4f.range
  %r = v4f.range %n, %n, %n : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %a, %b, %f, %q, %g, %t, %r : tensor<2x4xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<6x2xf32>, tensor<6x4xf32>, tensor<?xi64>
}

// CHECK-LABEL: func @cumsum
func.func @cumsum(%x: tensor<2x3xf32>, %a: tensor<i64>) -> tensor<2x3xf32> {
  // CHECK: v4f.cumsum %{{.*}}, %{{.*}} {exclusive = true, reverse = false}
  %0 = v4f.cumsum %x, %a {exclusive = true, reverse = false} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func @scatter_gather_nd_top_k
func.func @scatter_gather_nd_top_k(%d: tensor<4x4xf32>, %ie: tensor<2x4xi64>, %ue: tensor<2x4xf32>, %in: tensor<2x1xi64>, %k: tensor<1xi64>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x?xf32>, tensor<4x?xi64>) {
  // CHECK: v4f.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64, reduction = "add"}
  %0 = v4f.scatter_elements %d, %ie, %ue {axis = 0 : i64, reduction = "add"} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // CHECK: v4f.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "max"}
  %1 = v4f.scatter_nd %d, %in, %ue {reduction = "max"} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // CHECK: v4f.gather_nd %{{.*}}, %{{.*}} :
  %2 = v4f.gather_nd %d, %in {batch_dims = 0 : i64} : (tensor<4x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  // CHECK: v4f.top_k %{{.*}}, %{{.*}} {axis = 1 : i64, largest = false}
  %v, %i = v4f.top_k %d, %k {axis = 1 : i64, largest = false} : (tensor<4x4xf32>, tensor<1xi64>) -> (tensor<4x?xf32>, tensor<4x?xi64>)
  return %0, %1, %2, %v, %i : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x?xf32>, tensor<4x?xi64>
}

// CHECK-LABEL: func @unique_nms
func.func @unique_nms(%x: tensor<6xf32>, %m: tensor<2x3xi32>, %boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %t: tensor<1xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>, tensor<2x?xi32>, tensor<?x3xi64>, tensor<?x3xi64>) {
  // CHECK: v4f.unique %{{.*}} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  %y, %i, %inv, %n = v4f.unique %x {sorted = true} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  // CHECK: v4f.unique %{{.*}} {axis = 1 : i64, sorted = false}
  %y2, %i2, %inv2, %n2 = v4f.unique %m {axis = 1 : i64, sorted = false} : (tensor<2x3xi32>) -> (tensor<2x?xi32>, tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
  // CHECK: v4f.non_max_suppression %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {center_point_box = true}
  %s = v4f.non_max_suppression %boxes, %scores, %max, %t, %t {center_point_box = true} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  // CHECK: v4f.non_max_suppression %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
  %s2 = v4f.non_max_suppression %boxes, %scores, %max, %t : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  return %y, %i, %inv, %n, %y2, %s, %s2 : tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>, tensor<2x?xi32>, tensor<?x3xi64>, tensor<?x3xi64>
}

// CHECK-LABEL: func.func @select_branch
// CHECK: v4f.select_branch %arg0, %arg1, %arg2 : (tensor<1xi1>, tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x?xf32>
func.func @select_branch(%c: tensor<1xi1>, %a: tensor<2x8xf32>, %b: tensor<2x4xf32>) -> tensor<2x?xf32> {
  %0 = v4f.select_branch %c, %a, %b : (tensor<1xi1>, tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}
