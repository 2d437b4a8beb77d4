// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v3},v4f-build-plan)" | FileCheck %s
// RUN: v4f-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(v4f-form-dispatch-regions),v4f-select-cpu-strategy{target-cpu=x86-64-v4},v4f-build-plan)" | FileCheck %s --check-prefix=V4

// Kernel generation for every dispatch kind: each graph below becomes a
// module of kernels (ABI v3: one dispatch-state pointer, entry checks), each kernel named
// with the dispatches that run it, and a plan summary. The GEMM kinds show
// the strategy reaching the kernels: 8-lane FMAs for x86-64-v3, 16-lane for
// x86-64-v4. A fused elementwise region is one kernel.

// CHECK: module attributes {v4f.plan = {buffers = 3 : i64, constant_bytes = 0 : i64, dispatches = 1 : i64, kernels = 1 : i64
// Kernel ABI 3: the interface (3 bindings, no push constants; binding 0 the
// result, written) and the entry checks: the counts first, then every
// binding's length against its tensor's bytes (2x8 f32 out and a, 8 f32 b),
// before the body; a failed check returns 3.
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["add"], v4f.interface = array<i32: 3, 0, 3, 1, 1>}
// CHECK: %[[NB:.*]] = llvm.load {{.*}} -> i32
// CHECK: %[[NP:.*]] = llvm.load {{.*}} -> i32
// CHECK: arith.cmpi eq, %[[NB]], %c3_i32
// CHECK: arith.cmpi eq, %[[NP]], %c0_i32
// CHECK: cf.cond_br %{{.*}}, ^bb1, ^[[REFUSE:bb[0-9]+]]
// CHECK: ^bb1:
// CHECK-DAG: arith.cmpi sge, %{{.*}}, %c64_i64
// CHECK-DAG: arith.cmpi sge, %{{.*}}, %c32_i64
// CHECK: cf.cond_br %{{.*}}, ^bb2, ^[[REFUSE]]
// CHECK: ^[[REFUSE]]:
// CHECK-NEXT: %[[CODE:.*]] = arith.constant 3 : i32
// CHECK-NEXT: return %[[CODE]] : i32
func.func @main(%a: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = v4f.add %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 3 : i64, constant_bytes = 0 : i64, dispatches = 1 : i64, kernels = 1 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["mul + 2 fused"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: math.tanh
func.func @main(%a: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = v4f.mul %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = v4f.add %0, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %2 = v4f.tanh %1 : tensor<2x8xf32>
  return %2 : tensor<2x8xf32>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 3 : i64, constant_bytes = 0 : i64, dispatches = 1 : i64, kernels = 1 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["elementwise"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: arith.divui
func.func @main(%a: tensor<2x3xui8>, %b: tensor<3xui8>) -> tensor<2x3xui8> {
  %0 = v4f.elementwise %a, %b : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8> {
  ^bb0(%x: i8, %y: i8):
    %q = arith.divui %x, %y : i8
    v4f.yield %q : i8
  }
  return %0 : tensor<2x3xui8>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 3 : i64, constant_bytes = 0 : i64, dispatches = 1 : i64, kernels = 1 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["matmul"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: vector.fma {{.*}} : vector<8xf32>
// V4: vector.fma {{.*}} : vector<16xf32>
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %0 = v4f.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// The weight (720 bytes: 5 input channels, more than the small-input
// kernel takes) and, 64-byte aligned after it, im2col's position table
// (408 bytes: P = 36 columns padded to 48, 2 x 48 + 48 / 8 int32).
// CHECK: module attributes {v4f.plan = {buffers = 5 : i64, constant_bytes = 1176 : i64, dispatches = 2 : i64, kernels = 2 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv im2col"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// Chunks of 8 columns that leave the 6-wide output rows are gathered.
// CHECK: llvm.intr.masked.gather {{.*}} -> vector<8xf32>
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["conv"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: vector.fma {{.*}} : vector<8xf32>
// V4: vector.fma {{.*}} : vector<16xf32>
func.func @main(%x: tensor<1x5x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = arith.constant dense<1.0> : tensor<4x5x3x3xf32>
  %0 = v4f.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, activation = "relu"} : (tensor<1x5x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 3 : i64, constant_bytes = 0 : i64, dispatches = 2 : i64, kernels = 2 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["max_pool"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["avg_pool"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<1x4x7x7xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>) {
  %0 = v4f.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  %1 = v4f.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x3x3xf32>
  return %0, %1 : tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 5 : i64, constant_bytes = 0 : i64, dispatches = 3 : i64, kernels = 3 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["reduce_mean"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["softmax"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: math.exp
// CHECK: func.func @v4f_kernel_2(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["layer_norm"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<1x4x7x7xf32>, %s7: tensor<7xf32>) -> (tensor<1x4x1x1xf32>, tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>) {
  %0 = v4f.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
  %1 = v4f.softmax %x {axis = 3 : i64} : tensor<1x4x7x7xf32>
  %2 = v4f.layer_norm %x, %s7 {axis = 3 : i64, epsilon = 1.0e-5 : f32} : (tensor<1x4x7x7xf32>, tensor<7xf32>) -> tensor<1x4x7x7xf32>
  return %0, %1, %2 : tensor<1x4x1x1xf32>, tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>
}

// -----

// Run-time axes: a check that they name distinct dims in range comes first.
// CHECK: module attributes {v4f.plan = {buffers = 4 : i64, constant_bytes = 0 : i64, dispatches = 3 : i64, kernels = 3 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["reduce axes check (distinct, in range)"]
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["reduce"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_2(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["arg_reduce"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<?x4xf32>, %a: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?xi64>) {
  %0 = v4f.reduce %x axes(%a) {kind = "l2", axes = array<i64>, keepdims = true} : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %1 = v4f.arg_reduce %x {kind = "max", axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<?x4xf32>) -> tensor<?xi64>
  return %0, %1 : tensor<?x?xf32>, tensor<?xi64>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 6 : i64, constant_bytes = 0 : i64, dispatches = 4 : i64, kernels = 4 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["transpose"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["concat"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_2(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["concat"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_3(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["gather"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<?x4x2xf32>, %t: tensor<100x8xf32>, %ids: tensor<2x3xi64>) -> (tensor<2x?x4xf32>, tensor<?x4x4xf32>, tensor<2x3x8xf32>) {
  %1 = v4f.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<?x4x2xf32>) -> tensor<2x?x4xf32>
  %2 = v4f.concat %x, %x {axis = 2 : i64} : (tensor<?x4x2xf32>, tensor<?x4x2xf32>) -> tensor<?x4x4xf32>
  %3 = v4f.gather %t, %ids {axis = 0 : i64} : (tensor<100x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
  return %1, %2, %3 : tensor<2x?x4xf32>, tensor<?x4x4xf32>, tensor<2x3x8xf32>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 6 : i64, constant_bytes = 0 : i64, dispatches = 3 : i64, kernels = 3 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["expand"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["slice"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_2(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["shape"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<?x4xf32>, %s: tensor<2xi64>, %a: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x4xf32>, tensor<2xi64>) {
  %1 = v4f.expand %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %3 = v4f.slice %x, %a, %a axes(%a) : (tensor<?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  %4 = v4f.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  return %1, %3, %4 : tensor<?x?xf32>, tensor<?x4xf32>, tensor<2xi64>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 12 : i64, constant_bytes = 0 : i64, dispatches = 7 : i64, kernels = 7 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["split part 0"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["split part 1"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_2(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["fill"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_3(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["pad"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_4(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["gather_elements"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_5(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["trilu"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_6(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["range"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<6x4xf32>, %s: tensor<2xi64>, %p: tensor<4xi64>, %i: tensor<6x2xi64>, %n: tensor<i64>) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<6x2xf32>, tensor<6x4xf32>, tensor<?xi64>) {
  %a, %b = v4f.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  %f = v4f.fill %s {value = 1.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  %q = v4f.pad %x, %p {mode = "reflect"} : (tensor<6x4xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %g = v4f.gather_elements %x, %i {axis = 1 : i64} : (tensor<6x4xf32>, tensor<6x2xi64>) -> tensor<6x2xf32>
  %t = v4f.trilu %x k(%n) {upper = false} : (tensor<6x4xf32>, tensor<i64>) -> tensor<6x4xf32>
  %r = v4f.range %n, %n, %n : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %a, %b, %f, %q, %g, %t, %r : tensor<2x4xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<6x2xf32>, tensor<6x4xf32>, tensor<?xi64>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 3 : i64, constant_bytes = 0 : i64, dispatches = 1 : i64, kernels = 1 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["cumsum"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<2x3xf32>, %a: tensor<i64>) -> tensor<2x3xf32> {
  %0 = v4f.cumsum %x, %a {exclusive = true, reverse = false} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 10 : i64, constant_bytes = 0 : i64, dispatches = 6 : i64, kernels = 5 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["scatter_elements (copy)", "scatter_nd (copy)"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["scatter_elements"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_3(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["scatter_nd"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_4(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["gather_nd"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_5(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["top_k"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%d: tensor<4x4xf32>, %ie: tensor<2x4xi64>, %ue: tensor<2x4xf32>, %in: tensor<2x1xi64>, %k: tensor<1xi64>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x?xf32>, tensor<4x?xi64>) {
  %0 = v4f.scatter_elements %d, %ie, %ue {axis = 0 : i64, reduction = "add"} : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %1 = v4f.scatter_nd %d, %in, %ue {reduction = "max"} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %2 = v4f.gather_nd %d, %in {batch_dims = 0 : i64} : (tensor<4x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  %v, %i = v4f.top_k %d, %k {axis = 1 : i64, largest = false} : (tensor<4x4xf32>, tensor<1xi64>) -> (tensor<4x?xf32>, tensor<4x?xi64>)
  return %0, %1, %2, %v, %i : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x?xf32>, tensor<4x?xi64>
}

// -----

// CHECK: module attributes {v4f.plan = {buffers = 15 : i64, constant_bytes = 0 : i64, dispatches = 4 : i64, kernels = 4 : i64
// CHECK: func.func @v4f_kernel_0(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["unique"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_1(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["non_max_suppression"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_2(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["nonzero count"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: func.func @v4f_kernel_3(%arg0: !llvm.ptr) -> i32 attributes {v4f.dispatches = ["nonzero"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%x: tensor<6xf32>, %boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %t: tensor<1xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>, tensor<?x3xi64>, tensor<3x?xi64>) {
  %y, %i, %inv, %n = v4f.unique %x {sorted = true} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  %s = v4f.non_max_suppression %boxes, %scores, %max, %t, %t {center_point_box = true} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  %z = v4f.nonzero %scores : (tensor<1x2x6xf32>) -> tensor<3x?xi64>
  return %y, %i, %inv, %n, %s, %z : tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>, tensor<?x3xi64>, tensor<3x?xi64>
}

// -----

// A run-time If (v4f.select_branch): the condition is written as an int64
// the plan reads back; each side's dispatches and its copy into the result
// are guarded by it, so only the taken side runs.
// CHECK: module attributes {v4f.plan = {buffers = 6 : i64, constant_bytes = 0 : i64, dispatches = 6 : i64
// CHECK: attributes {v4f.dispatches = ["input as If condition"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: attributes {v4f.dispatches = ["concat [guarded]"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: attributes {v4f.dispatches = ["tanh [guarded]"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: attributes {v4f.dispatches = ["select_branch then [guarded]"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: attributes {v4f.dispatches = ["select_branch else [guarded]"], v4f.interface = array<i32: {{[0-9, ]+}}>}
func.func @main(%c: tensor<i1>, %x: tensor<2x8xf32>) -> tensor<2x?xf32> {
  %a = v4f.concat %x, %x {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>
  %b = v4f.tanh %x : tensor<2x8xf32>
  %y = v4f.select_branch %c, %a, %b : (tensor<i1>, tensor<2x16xf32>, tensor<2x8xf32>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}

// -----

// An LSTM over a run-time sequence length and batch stays whole and runs as
// one time-loop kernel: one workgroup per (direction, batch entry), the
// states in scratch, 8-lane dot products against W and R, and a status that
// reports a batch mismatch of initial_h.
// CHECK: module attributes {v4f.plan = {buffers = 7 : i64, constant_bytes = 0 : i64, dispatches = 1 : i64
// CHECK: attributes {v4f.dispatches = ["recurrent"], v4f.interface = array<i32: {{[0-9, ]+}}>}
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: vector.reduction <add>
// CHECK: math.tanh
func.func @main(%x: tensor<?x?x8xf32>, %w: tensor<1x12x8xf32>, %r: tensor<1x12x3xf32>, %h0: tensor<1x?x3xf32>)
    -> (tensor<?x1x?x3xf32>, tensor<1x?x3xf32>) {
  %y, %yh, %yc = v4f.recurrent %x, %w, %r initial_h(%h0)
      {cell = "lstm", direction = "forward", hidden_size = 3 : i64,
       activations = ["sigmoid", "tanh", "tanh"],
       activation_alpha = array<f32: 0.0, 0.0, 0.0>, activation_beta = array<f32: 0.0, 0.0, 0.0>}
      : (tensor<?x?x8xf32>, tensor<1x12x8xf32>, tensor<1x12x3xf32>, tensor<1x?x3xf32>)
      -> (tensor<?x1x?x3xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>)
  return %y, %yh : tensor<?x1x?x3xf32>, tensor<1x?x3xf32>
}
